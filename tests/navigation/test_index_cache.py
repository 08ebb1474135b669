"""The index is built from source without running it, follows file revisions, lives in the data home
and respects the same ignore rules as search."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from protoagent.errors import ToolRejected
from protoagent.navigation.index import SymbolIndex, cache_file
from protoagent.navigation.service import index_for

from .support import ask_repo, places, shop_repo

IMPORT_BOMB = (
    "import pathlib\n"
    "pathlib.Path(__file__).with_name('PWNED').write_text('ran')\n"
    "raise SystemExit('imported')\n"
    "\n"
    "\n"
    "def payload():\n"
    "    return 1\n"
)


def test_a_module_that_would_write_a_file_on_import_stays_unrun(tmp_path: Path) -> None:
    root = shop_repo(tmp_path, {"bomb.py": IMPORT_BOMB, "conftest.py": IMPORT_BOMB, "shop/setup.py": IMPORT_BOMB})
    found = ask_repo(root, tmp_path / "home", "definition", "payload")
    assert {h.path for h in found.results} == {"bomb.py", "conftest.py", "shop/setup.py"}
    assert not list(root.rglob("PWNED"))


def test_the_cache_lives_privately_in_the_data_home_and_nothing_is_written_in_the_repository(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    ask_repo(root, tmp_path / "home", "definition", "price")
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    cache = cache_file(tmp_path / "home", root)
    assert cache.is_file() and cache.parent == tmp_path / "home" / "navigation"
    assert (cache.stat().st_mode & 0o777, cache.parent.stat().st_mode & 0o777) == (0o600, 0o700)


def test_a_changed_file_is_parsed_again_and_an_untouched_one_is_not(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    index = SymbolIndex(root, tmp_path / "cache.sqlite")
    assert index.refresh().parsed == 5
    assert index.refresh().parsed == 0
    util = root / "shop" / "util.py"
    util.write_text(util.read_text() + "\n\ndef discount(amount):\n    return price(amount) * 0.9\n")
    report = index.refresh()
    assert report.parsed == 1 and report.files == 5
    os.utime(util)  # touched, same content: the stamp changes, the revision does not
    index.refresh()
    assert index.definitions_named("discount") == [("shop/util.py", "discount", "function", 12, 13)]
    index.close()
    reopened = SymbolIndex(root, tmp_path / "cache.sqlite")
    assert reopened.refresh().parsed == 0  # the cache outlives the process
    reopened.close()


def test_results_carry_the_revision_read_file_reports(tmp_path: Path) -> None:
    import hashlib

    root = shop_repo(tmp_path)
    found = ask_repo(root, tmp_path / "home", "definition", "price")
    assert found.results[0].revision == hashlib.sha256((root / "shop/util.py").read_bytes()).hexdigest()


def test_new_removed_and_ignored_files_are_seen_on_the_next_query(tmp_path: Path) -> None:
    root = shop_repo(tmp_path, {".gitignore": "build/\n", "build/gen.py": "def generated():\n    pass\n"})
    home = tmp_path / "home"
    assert places(ask_repo(root, home, "definition", "checkout")) == [("app.py", 5)]
    assert "generated" not in index_for(root, home).all_names()  # ignored like search ignores it
    (root / "shop" / "extra.py").write_text("def fresh():\n    pass\n")
    assert places(ask_repo(root, home, "definition", "fresh")) == [("shop/extra.py", 1)]
    (root / ".gitignore").write_text("")
    assert places(ask_repo(root, home, "definition", "generated")) == [("build/gen.py", 1)]
    (root / "shop" / "extra.py").unlink()
    with pytest.raises(ToolRejected) as gone:
        ask_repo(root, home, "definition", "fresh")
    assert gone.value.kind == "unknown_symbol"


def test_an_index_cut_by_its_time_limit_says_it_is_incomplete_and_the_next_call_goes_on(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    home = tmp_path / "home"
    first = ask_repo(root, home, "outline", "app", time_limit_s=0.0)  # parses one file, then stops
    assert any(note.startswith("index incomplete: 4 of 5 source files") for note in first.notes)
    second = ask_repo(root, home, "definition", "price")
    assert places(second) == [("shop/util.py", 4)] and not any("incomplete" in n for n in second.notes)


def test_a_file_that_does_not_parse_is_counted_not_fatal(tmp_path: Path) -> None:
    root = shop_repo(tmp_path, {"broken.py": "def oops(:\n"})
    found = ask_repo(root, tmp_path / "home", "definition", "price")
    assert places(found) == [("shop/util.py", 4)]
    assert [path for path, _ in index_for(root, tmp_path / "home").unparsable()] == ["broken.py"]


def test_many_files_are_parsed_in_worker_processes_with_the_same_answers(tmp_path: Path) -> None:
    body = "from steps.s{next:02d} import step{next}\n\n\ndef step{n}():\n    return step{next}()\n"
    chain = {f"steps/s{n:02d}.py": body.format(n=n, next=n + 1) for n in range(79)}
    chain["steps/__init__.py"] = ""
    chain["steps/s79.py"] = "def step79():\n    return 79\n"
    root = shop_repo(tmp_path, chain)
    index = SymbolIndex(root, tmp_path / "cache.sqlite")
    report = index.refresh()
    assert report.parsed == 86 and report.left == 0
    index.close()
    found = ask_repo(root, tmp_path / "home", "callers", "step42")
    assert [(h.path, h.line, h.symbol) for h in found.results] == [("steps/s41.py", 5, "steps.s41.step41")]


def test_two_indexes_on_one_cache_file_both_refresh_without_conflict(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    first, second = SymbolIndex(root, tmp_path / "cache.sqlite"), SymbolIndex(root, tmp_path / "cache.sqlite")
    assert second.refresh().parsed == 5  # as a second process that read the cache before the first wrote
    assert first.refresh().parsed == 0
    (root / "shop" / "new.py").write_text("def fresh():\n    pass\n")
    first.refresh()
    second.refresh()
    assert second.definitions_named("fresh") == [("shop/new.py", "fresh", "function", 1, 2)]
    first.close()
    second.close()


def test_a_link_out_of_the_repository_and_a_fifo_are_not_indexed(tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text("def leaked_secret():\n    pass\n")
    root = shop_repo(tmp_path)
    os.symlink(tmp_path / "secret.py", root / "link.py")
    os.mkfifo(root / "pipe.py")
    found = ask_repo(root, tmp_path / "home", "definition", "price")  # returns: the FIFO is never opened
    assert places(found) == [("shop/util.py", 4)]
    assert "leaked_secret" not in index_for(root, tmp_path / "home").all_names()


def test_the_data_home_keeps_a_bounded_number_of_project_indexes(tmp_path: Path) -> None:
    from protoagent.navigation import index as index_module

    folder = tmp_path / "home" / "navigation"
    folder.mkdir(parents=True)
    for n in range(index_module.MAX_CACHED_PROJECTS + 3):
        stale = folder / f"old{n}-0123456789abcdef.sqlite"
        stale.write_bytes(b"")
        os.utime(stale, (1_000_000 + n, 1_000_000 + n))
    root = shop_repo(tmp_path)
    ask_repo(root, tmp_path / "home", "definition", "price")
    kept = sorted(p.name for p in folder.glob("*.sqlite"))
    assert len(kept) == index_module.MAX_CACHED_PROJECTS and cache_file(tmp_path / "home", root).name in kept
    assert "old0-0123456789abcdef.sqlite" not in kept  # the least recently used went first
