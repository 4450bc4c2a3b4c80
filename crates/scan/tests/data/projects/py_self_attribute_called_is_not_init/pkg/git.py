import subprocess


class Git:
    def __init__(self, rev="HEAD"):
        subprocess.run(["git", "show", rev], timeout=10)

    def diff(self, rev):
        return subprocess.run(["git", "diff", rev], timeout=10)
