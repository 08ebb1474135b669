from pages import first_items, last_page_size, page_count


def test_page_count():
    assert page_count(10, 3) == 4


def test_last_page_size():
    assert last_page_size(10, 3) == 1


def test_first_items():
    assert first_items(["a", "b", "c", "d"], 2) == ["a", "b"]
    assert first_items(["x", "y", "z"], 3) == ["x", "y", "z"]
