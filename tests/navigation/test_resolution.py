"""Python names resolve through imports, classes (self/cls/super), aliases and re-exports, or not at all."""

from __future__ import annotations

from pathlib import Path

from .support import ask_repo, places, shop_repo


def test_a_method_is_referenced_through_self_super_and_a_typed_local_not_through_an_unknown_value(
    tmp_path: Path,
) -> None:
    root = shop_repo(tmp_path)
    found = ask_repo(root, tmp_path / "home", "references", "Base.send")
    assert found.matched == ["shop.base.Base.send"]
    assert places(found) == [("app.py", 7), ("shop/client.py", 7), ("shop/client.py", 10)]
    # thing.send(2) in app.unknown is of unknown type: it is not counted as Base.send, nor Other.send,
    # but the note names it so the reader can look
    assert any(note.startswith("1 use of .send on values whose type") and "app.py:13" in note for note in found.notes)
    other = ask_repo(root, tmp_path / "home", "references", "Other.send")
    assert places(other) == []


def test_a_reexported_class_and_a_star_exported_function_resolve_to_their_definitions(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    client = ask_repo(root, tmp_path / "home", "references", "Client")
    assert places(client) == [("app.py", 2), ("app.py", 6), ("app.py", 8), ("shop/__init__.py", 1)]
    assert {hit.kind for hit in client.results} == {"import", "call"}
    price = ask_repo(root, tmp_path / "home", "callers", "price")
    # cost(...) is price imported under another name; price(...) comes through `from .util import *`
    assert [(h.path, h.line, h.symbol) for h in price.results] == [
        ("app.py", 8, "app.checkout"),
        ("shop/client.py", 7, "shop.client.Client.total"),
    ]


def test_a_private_name_is_not_star_exported_when_all_does_not_list_it(tmp_path: Path) -> None:
    root = shop_repo(tmp_path, {"use.py": "from shop import *\n\n\ndef go():\n    return _hidden()\n"})
    assert places(ask_repo(root, tmp_path / "home", "references", "_hidden")) == []


def test_a_method_is_found_with_its_class_and_ambiguity_is_named(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    found = ask_repo(root, tmp_path / "home", "definition", "send")
    assert [(h.path, h.line, h.symbol, h.enclosing) for h in found.results] == [
        ("shop/base.py", 2, "shop.base.Base.send", "shop.base.Base"),
        ("shop/client.py", 14, "shop.client.Other.send", "shop.client.Other"),
    ]
    assert any("matches 2 definitions" in note for note in found.notes)
    qualified = ask_repo(root, tmp_path / "home", "definition", "client.Other.send")
    assert places(qualified) == [("shop/client.py", 14)] and not qualified.notes


def test_callees_resolve_each_call_to_its_definition_and_name_the_unresolved(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    found = ask_repo(root, tmp_path / "home", "callees", "checkout")
    assert [(h.symbol, h.via) for h in found.results] == [
        ("shop.client.Client", "app.py:6"),
        ("shop.base.Base.send", "app.py:7"),
        ("shop.client.Client.total", "app.py:8"),
        ("shop.client.Client", "app.py:8"),
        ("shop.util.price", "app.py:8"),
    ]
    unknown = ask_repo(root, tmp_path / "home", "callees", "unknown")
    assert unknown.results == [] and any("thing.send" in note for note in unknown.notes)


def test_outline_lists_a_files_classes_and_methods_with_line_ranges(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    found = ask_repo(root, tmp_path / "home", "outline", "shop.client")
    assert [(h.symbol, h.kind, h.line, h.end_line) for h in found.results] == [
        ("shop.client.Client", "class", 5, 10),
        ("shop.client.Client.total", "method", 6, 7),
        ("shop.client.Client.resend", "method", 9, 10),
        ("shop.client.Other", "class", 13, 15),
        ("shop.client.Other.send", "method", 14, 15),
    ]
    members = ask_repo(root, tmp_path / "home", "outline", "Client")
    assert [h.symbol for h in members.results] == ["shop.client.Client.total", "shop.client.Client.resend"]


def test_an_alias_assignment_means_what_it_aliases(tmp_path: Path) -> None:
    extra = {"alias.py": "from shop.util import price\n\ncharge = price\n\n\ndef go():\n    return charge(3)\n"}
    root = shop_repo(tmp_path, extra)
    callers = ask_repo(root, tmp_path / "home", "callers", "shop.util.price")
    assert ("alias.py", 7) in places(callers)


def test_javascript_and_typescript_definitions_come_from_the_grammars(tmp_path: Path) -> None:
    ts = (
        "export interface Options { retry: number }\n"
        "export class Ky {\n"
        "  fetch(input: string) {\n"
        "    const retry = () => this.fetch(input);\n"
        "    return retry();\n"
        "  }\n"
        "}\n"
        "export const create = (options: Options) => new Ky();\n"
        "type Hook = () => void;\n"
    )
    js = "function parse(text) {\n  return text;\n}\nmodule.exports = { parse };\n"
    root = shop_repo(tmp_path, {"web/ky.ts": ts, "web/parse.js": js})
    home = tmp_path / "home"
    assert [(h.path, h.line, h.kind) for h in ask_repo(root, home, "definition", "Ky.fetch").results] == [
        ("web/ky.ts", 3, "method")
    ]
    assert [h.kind for h in ask_repo(root, home, "definition", "Options").results] == ["interface"]
    assert [h.kind for h in ask_repo(root, home, "definition", "create").results] == ["function"]
    assert [h.kind for h in ask_repo(root, home, "definition", "Hook").results] == ["type"]
    assert places(ask_repo(root, home, "definition", "parse")) == [("web/parse.js", 1)]
    refs = ask_repo(root, home, "references", "Ky")
    assert ("web/ky.ts", 8) in places(refs) and any("by name" in note for note in refs.notes)
