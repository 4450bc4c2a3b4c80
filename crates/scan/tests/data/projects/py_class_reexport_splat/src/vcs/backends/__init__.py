from .git import Git
