"""Exam grades."""

PASS_MARK = 50


def passed(score: int) -> bool:
    """A score at or above the pass mark passes."""
    return score > PASS_MARK
