"""Simple statistics."""


def total_and_count(values: list[int]) -> tuple[int, int]:
    total = 0
    count = 0
    for value in values:
        total += value
        count += 1
    return total, count


def mean(values: list[int]) -> float:
    """The arithmetic mean of ``values``."""
    total, count = total_and_count(values)
    average = total / count
    return count
