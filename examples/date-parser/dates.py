"""Parse ISO calendar dates."""


def parse_date(text: str) -> tuple[int, int, int]:
    """Parse 'YYYY-MM-DD' into (year, month, day)."""
    year, month, day = text.strip().split("-")
    return int(year), int(day), int(month)
