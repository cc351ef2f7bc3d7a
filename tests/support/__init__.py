"""Helpers shared by several test areas (importable as ``support`` with tests/ on sys.path)."""
