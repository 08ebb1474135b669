"""code_context takes an exact symbol: prose, regexes and unknown names are rejected with exact
candidates by the schema and by the service, each on its own; results are bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from protoagent.errors import ToolRejected
from protoagent.navigation.tool import CodeContextInput, CodeContextTool

from .support import ask_repo, shop_repo


@pytest.mark.parametrize(
    ("symbol", "problem", "candidate"),
    [
        ("where is the price computed", "prose", "price"),
        ("pri.*ce", "regex", "price"),
        ("^def checkout", "regex", "checkout"),
        ("prise", "unknown", "price"),
        ("Nothing.send", "unknown", "shop.base.Base.send"),
    ],
)
def test_the_service_rejects_prose_regex_and_unknown_names_with_exact_candidates(
    tmp_path: Path, symbol: str, problem: str, candidate: str
) -> None:
    root = shop_repo(tmp_path)
    with pytest.raises(ToolRejected) as caught:
        ask_repo(root, tmp_path / "home", "references", symbol)
    assert caught.value.details["problem"] == problem
    assert candidate in caught.value.details["candidates"]
    assert candidate in caught.value.message and "\n" not in caught.value.message


@pytest.mark.parametrize("symbol", ["where is price", "pri.*ce", "a..b", "", "x" * 201])
def test_the_schema_rejects_what_is_not_an_exact_symbol_before_any_service_runs(symbol: str) -> None:
    with pytest.raises(ValidationError) as caught:
        CodeContextInput.model_validate({"symbol": symbol, "operation": "definition"})
    assert "not an exact symbol" in str(caught.value)


def test_the_declared_schema_carries_the_operations_and_leaves_the_symbol_check_to_the_validator() -> None:
    schema = CodeContextTool().schema()
    assert schema.parameters["properties"]["symbol"] == {"type": "string"}  # the validator checks it (above)
    assert CodeContextInput.model_validate({"symbol": "Client.send", "operation": "callers"}).symbol == "Client.send"
    assert schema.parameters["properties"]["operation"]["enum"] == [
        "definition",
        "references",
        "callers",
        "callees",
        "outline",
    ]
    declared = {"type": "function", "function": {"name": schema.name, "description": schema.description}}
    declared["function"]["parameters"] = schema.parameters
    assert len(json.dumps(declared, separators=(",", ":"))) <= 340
    assert CodeContextTool.metadata.effect == "read"


def test_results_are_bounded_and_the_rest_is_counted_in_a_note(tmp_path: Path) -> None:
    calls = "".join(f"    price({n})\n" for n in range(120))
    root = shop_repo(tmp_path, {"many.py": f"from shop.util import price\n\n\ndef run():\n{calls}"})
    found = ask_repo(root, tmp_path / "home", "callers", "price", limit=40)
    assert len(found.results) == 40 and found.total == 122
    assert any("82 more results not shown" in note for note in found.notes)


def test_a_files_path_given_as_the_symbol_is_answered_with_its_modules_exact_name(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    with pytest.raises(ToolRejected) as caught:
        ask_repo(root, tmp_path / "home", "outline", "shop/client.py")
    assert caught.value.details["candidates"] == ["shop.client"]


def test_the_text_the_model_reads_is_bounded_per_line_even_for_long_names(tmp_path: Path) -> None:
    from protoagent.navigation.service import MAX_LINE_CHARS, render

    long_name = "f" + "x" * 190
    deep = "d" * 120 + "/" + "e" * 120 + "/deep.py"
    root = shop_repo(tmp_path, {deep: f"def {long_name}():\n    pass\n\n\ndef use():\n    {long_name}()\n"})
    text = render(ask_repo(root, tmp_path / "home", "callers", long_name))
    assert all(len(line) <= MAX_LINE_CHARS for line in text.splitlines())
