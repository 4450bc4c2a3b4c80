import subprocess


def run_git(ref):
    return subprocess.run("git log " + ref, shell=True, timeout=10)
