from prices import with_tax


def test_with_tax_adds_the_rate():
    assert with_tax(100.0, 0.25) == 125.0
    assert with_tax(10.0, 0.5) == 15.0
