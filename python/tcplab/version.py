"""The tcplab version, in a module of its own so every stage can name it without importing
the package's notebook API (``tcplab/__init__.py``). pyproject.toml states the same."""

__version__ = "0.16.0"
