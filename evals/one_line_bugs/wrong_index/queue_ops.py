"""A tiny first-in, first-out queue on a list."""


def peek(queue: list[str]) -> str:
    """The item that would leave the queue next (the oldest one, at the front)."""
    return queue[-1]
