"""The package version, in a leaf module so any layer can read it without importing the package root."""

__version__ = "0.1.0"
