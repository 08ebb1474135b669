from queue_ops import peek


def test_peek_returns_the_oldest_item():
    assert peek(["first", "second", "third"]) == "first"
    assert peek(["x", "y"]) == "x"
