from geometry import area, describe


def test_area():
    assert area(3, 2) == 6


def test_describe_puts_width_first():
    assert describe(3, 2) == "3x2"
    assert describe(5, 4) == "5x4"
