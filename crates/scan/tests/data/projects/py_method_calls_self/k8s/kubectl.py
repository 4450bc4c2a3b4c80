import subprocess


class Kubectl:
    def __init__(self, namespace):
        self.namespace = namespace

    def logs(self, pod):
        return self._run("logs " + pod)

    def version(self):
        return self._run("version")

    def _run(self, arguments):
        return subprocess.run("kubectl " + arguments, shell=True, timeout=30)
