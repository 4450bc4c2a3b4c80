import subprocess

from .ping import ping


def pong(host, count):
    subprocess.run(["traceroute", host], timeout=30)
    return ping(host, count)
