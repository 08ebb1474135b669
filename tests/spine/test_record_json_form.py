"""A record's JSON form is its fields in declared order, converted one way (``protoagent.json_form``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from protoagent.json_form import json_form


@dataclass(frozen=True, slots=True)
class Inner:
    name: str

    def to_json(self) -> dict[str, Any]:
        return {"inner": self.name}


@dataclass(frozen=True, slots=True)
class Outer:
    record_id: str
    path: Path | None
    items: tuple[Inner, ...]
    env: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({"A": "1"}))
    nested: tuple[tuple[int, ...], ...] = ((1, 2),)
    hidden: str = "not in the JSON"
    flag: bool = True


def test_json_form_keeps_declared_order_renames_and_omissions() -> None:
    record = Outer("x", Path("/tmp/a"), (Inner("i"),))
    form = json_form(record, rename={"record_id": "id"}, omit=("hidden",))
    assert json.dumps(form) == (
        '{"id": "x", "path": "/tmp/a", "items": [{"inner": "i"}], "env": {"A": "1"}, "nested": [[1, 2]], "flag": true}'
    )
    assert json_form(Outer("x", None, ()), omit=("env", "nested", "hidden")) == {
        "record_id": "x",
        "path": None,
        "items": [],
        "flag": True,
    }


def test_a_value_without_json_form_is_refused_not_stringified() -> None:
    @dataclass(frozen=True, slots=True)
    class Odd:
        value: object

    with pytest.raises(TypeError, match="a set has no JSON form"):
        json_form(Odd({1}))
