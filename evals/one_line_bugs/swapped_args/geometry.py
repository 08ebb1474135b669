"""Rectangles."""


def area(width: float, height: float) -> float:
    """The area of a width by height rectangle."""
    return width * height


def describe(width: int, height: int) -> str:
    """A label such as '3x2' for a rectangle."""
    return format_size(height, width)


def format_size(width: int, height: int) -> str:
    return f"{width}x{height}"
