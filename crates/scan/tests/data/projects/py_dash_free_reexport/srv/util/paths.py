from pathlib import Path


def validate_path(path):
    resolved = str(Path(path).expanduser().resolve())
    return resolved
