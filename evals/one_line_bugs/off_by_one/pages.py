"""Split a list of items into pages."""


def page_count(items: int, per_page: int) -> int:
    """How many pages hold ``items`` items at ``per_page`` per page."""
    return (items + per_page - 1) // per_page


def last_page_size(items: int, per_page: int) -> int:
    """How many items the last page holds."""
    rest = items % per_page
    return rest if rest else per_page


def first_items(items: list[str], count: int) -> list[str]:
    """The first ``count`` items."""
    return items[: count - 1]
