from .b import git_clone


def _normalise(url):
    return git_clone(url.strip())


def fetch(url, depth):
    target = url.rstrip("/")
    return _normalise(target)
