"""Who may enter."""


def may_enter(age: int, banned: bool) -> bool:
    """Adults who are not banned may enter."""
    if banned:
        return False
    return age < 18
