"""Normalize user names."""


def normalize(name: str) -> str:
    """A user name without surrounding spaces, in lower case."""
    return name.lower()
