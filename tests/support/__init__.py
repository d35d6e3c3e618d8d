"""Helpers several test folders share (plain functions, not fixtures).

Importable as ``support`` from any test: the root ``tests/conftest.py`` sits in a folder
that is not a package, so pytest puts ``tests/`` on ``sys.path``. A child process a test
starts gets the same path from ``support.children.spawn``.
"""
