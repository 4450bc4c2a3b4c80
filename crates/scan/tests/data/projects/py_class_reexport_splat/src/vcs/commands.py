import os


def dispatch(command="status", **options):
    return os.system("git " + command)
