import os


def run_command(command):
    return os.popen(command).read()
