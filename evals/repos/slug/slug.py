"""Make URL slugs."""


def slugify(title: str) -> str:
    """Lower-case words joined by hyphens: 'Hello World' -> 'hello-world'."""
    words = title.split()
    return "_".join(word.lower() for word in words)
