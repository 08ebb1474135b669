from durations import to_seconds


def test_to_seconds():
    assert to_seconds(2, 5) == 125
    assert to_seconds(1, 0) == 60
