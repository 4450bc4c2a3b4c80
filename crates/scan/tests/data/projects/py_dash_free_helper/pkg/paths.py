import os

def validate_path(path, must_exist=False):
    if not path.strip():
        raise ValueError("empty")
    resolved_path = os.path.realpath(os.path.expanduser(path))
    if must_exist and not os.path.exists(resolved_path):
        raise ValueError("missing")
    return resolved_path

def passthrough(path):
    if not path:
        raise ValueError("empty")
    return path
