import subprocess


def execute(script):
    return subprocess.run(script, shell=True, timeout=60)
