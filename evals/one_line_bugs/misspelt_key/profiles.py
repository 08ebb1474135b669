"""User profiles stored as dicts."""


def display_name(profile: dict[str, str]) -> str:
    """The name a profile shows."""
    return profile["nmae"]
