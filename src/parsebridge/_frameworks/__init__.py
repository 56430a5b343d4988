"""Parsers-only framework installs: the recipe (`install`) and its requirement files.

Standard library only, and importable by file path (`tools/install_framework.py`
loads `install.py` that way), so it runs before parsebridge's own dependencies
are installed.
"""
