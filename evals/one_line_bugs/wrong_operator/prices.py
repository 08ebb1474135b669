"""Prices with tax."""


def with_tax(price: float, rate: float) -> float:
    """The price after adding tax at ``rate`` (0.2 for 20 %)."""
    return price * (1 - rate)
