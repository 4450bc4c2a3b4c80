from .paths import validate_path
