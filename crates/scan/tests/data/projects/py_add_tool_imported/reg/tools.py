import subprocess


def run_command(command: str, cwd: str = ".") -> str:
    return subprocess.getoutput(command)


def evaluate(code: str) -> str:
    return str(eval(code))


def unused(command: str) -> str:
    return subprocess.getoutput(command)
