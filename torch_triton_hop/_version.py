"""The package's version: the one source of truth (setup.py reads this file without importing the package)."""

__version__ = "0.1.0"
