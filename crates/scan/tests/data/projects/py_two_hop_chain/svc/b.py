import os


def git_clone(url):
    return os.system(f"git clone {url}")
