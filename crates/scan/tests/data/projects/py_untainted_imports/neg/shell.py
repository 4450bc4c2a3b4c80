import os


def run(command):
    return os.system(command)


def run_other(command):
    return os.system(command)
