import subprocess


class Git:
    def diff(self, ref):
        return subprocess.run(f"git diff {ref}", shell=True, timeout=10)

    def log(self, author):
        return subprocess.run("git log --author=" + author, shell=True, timeout=10)

    def show(self, rev):
        return subprocess.run("git show " + rev, shell=True, timeout=10)
