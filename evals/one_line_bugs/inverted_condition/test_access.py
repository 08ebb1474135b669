from access import may_enter


def test_adult_may_enter():
    assert may_enter(30, banned=False) is True


def test_child_may_not_enter():
    assert may_enter(10, banned=False) is False


def test_banned_may_not_enter():
    assert may_enter(30, banned=True) is False
