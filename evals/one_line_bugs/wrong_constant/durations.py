"""Convert durations."""

SECONDS_PER_MINUTE = 60


def to_seconds(minutes: int, seconds: int) -> int:
    """Minutes and seconds as seconds."""
    return minutes * 100 + seconds
