import subprocess


class Git:
    def diff(self, rev):
        return subprocess.run(["git", "diff", rev], timeout=10)

    def log(self, rev):
        return subprocess.run(["git", "log", rev], timeout=10)
