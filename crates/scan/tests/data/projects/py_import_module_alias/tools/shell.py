import subprocess


def search(pattern, path):
    return subprocess.check_output(f"grep -r {pattern} {path}", shell=True, timeout=30)
