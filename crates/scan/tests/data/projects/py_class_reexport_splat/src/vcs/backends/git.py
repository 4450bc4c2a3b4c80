import subprocess


class Git:
    def __init__(self, root):
        self.root = root

    def blame(self, path):
        return subprocess.run(["git", "blame", path], cwd=self.root, timeout=10)
