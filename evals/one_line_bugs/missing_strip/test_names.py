from names import normalize


def test_normalize_lowercases():
    assert normalize("Ada") == "ada"


def test_normalize_drops_surrounding_spaces():
    assert normalize("  Grace ") == "grace"
    assert normalize("Alan  ") == "alan"
