from grades import passed


def test_pass_mark_itself_passes():
    assert passed(50) is True


def test_below_fails():
    assert passed(49) is False
