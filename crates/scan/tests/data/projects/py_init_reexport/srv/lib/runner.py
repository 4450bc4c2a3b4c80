import subprocess


def run_script(script):
    return subprocess.run(["bash", "-c", script], timeout=60)
