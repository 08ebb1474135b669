"""Shared set-up for navigation tests: a temporary repository and its index in a temporary data home."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from protoagent.navigation.query import MAX_RESULTS, Answer, Operation
from protoagent.navigation.service import answer
from protoagent.testing import make_repo

SHOP = {
    "shop/__init__.py": "from .client import Client as Client\nfrom .util import *\n",
    "shop/util.py": (
        '__all__ = ["price"]\n\n\ndef price(amount):\n    return round(amount, 2)\n\n\ndef _hidden():\n    pass\n'
    ),
    "shop/base.py": "class Base:\n    def send(self, data):\n        return data\n",
    "shop/client.py": (
        "from shop.base import Base\n"
        "from shop.util import price as cost\n"
        "\n"
        "\n"
        "class Client(Base):\n"
        "    def total(self, amount):\n"
        "        return self.send(cost(amount))\n"
        "\n"
        "    def resend(self):\n"
        "        return super().send(1)\n"
        "\n"
        "\n"
        "class Other:\n"
        "    def send(self, data):\n"
        "        return None\n"
    ),
    "app.py": (
        "import shop\n"
        "from shop import Client, price\n"
        "\n"
        "\n"
        "def checkout(amount):\n"
        "    client = Client()\n"
        "    client.send(amount)\n"
        "    shop.Client().total(price(amount))\n"
        "    return client\n"
        "\n"
        "\n"
        "def unknown(thing):\n"
        "    return thing.send(2)\n"
    ),
}


def shop_repo(tmp_path: Path, extra: Mapping[str, str] | None = None) -> Path:
    return make_repo(tmp_path / "repo", {**SHOP, **(extra or {})}, git=False)


def ask_repo(
    root: Path, home: Path, operation: Operation, symbol: str, *, limit: int = MAX_RESULTS, time_limit_s: float = 30.0
) -> Answer:
    """One operation through the service, as the tool runs it (the index cached under ``home``)."""
    return answer(root, operation, symbol, home=home, limit=limit, time_limit_s=time_limit_s)


def places(found: Answer) -> list[tuple[str, int]]:
    return [(hit.path, hit.line) for hit in found.results]
