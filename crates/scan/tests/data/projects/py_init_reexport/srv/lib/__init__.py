from .runner import run_script as execute

__all__ = ["execute"]
