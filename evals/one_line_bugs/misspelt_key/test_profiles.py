from profiles import display_name


def test_display_name():
    assert display_name({"name": "Ada", "email": "ada@example.org"}) == "Ada"
    assert display_name({"name": "Grace"}) == "Grace"
