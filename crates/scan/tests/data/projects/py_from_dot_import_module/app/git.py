import os


def diff(ref):
    os.system("git diff " + ref)
