import os


def pack(source, destination, label):
    os.system("tar czf archive.tgz " + source)
    os.system("mv archive.tgz " + destination)
    os.system(f"echo {label}")
