"""What of a long read an assignment carries: the windows it points at, and a budget shared so
that no named file crowds out another (cost of real work: a four-file feature's Coder packet once
spent its 300 lines on a README and a test file and left out the module it was to change)."""

from __future__ import annotations

from pathlib import Path

from protoagent.workflow.packets import open_construct
from protoagent.workflow.source_spans import SourceSpan, SpanBudget
from protoagent.workflow.span_choice import carried, lines_named_in, windows

from .support import call, run_workflow, say

MODULE = "".join(f"def f{n}(x):\n    y = x + {n}\n    return y\n\n\n" for n in range(40))  # 200 lines
"""``f{n}`` starts at line 5n+1."""
TESTS = "".join(f"def test_f{n}():\n    assert f{n}(0) == {n}\n\n\n" for n in range(30))  # 120 lines


def _span(path: str, text: str) -> SourceSpan:
    lines = text.count("\n")
    return SourceSpan(path, 1, lines, lines, "rev", text)


def test_a_named_line_of_a_long_read_travels_as_its_definition_and_a_few_lines_around() -> None:
    span = _span("mod.py", MODULE)
    [window] = windows(span, "in mod.py line 103 (in f20) return y - 20")
    assert (window.start_line, window.end_line) == (101, 109)
    assert window.content.startswith("def f20(x):") and "return y" in window.content
    assert windows(span, "in mod.py rename every function") == [span]  # points at none of its lines
    assert windows(_span("small.py", MODULE[:250]), "small.py line 3") == [_span("small.py", MODULE[:250])]


def test_a_definition_named_as_code_travels_whole_and_a_prose_word_does_not_cut() -> None:
    span = _span("mod.py", MODULE.replace("def f7(", "def parse_date("))
    [window] = windows(span, "make `parse_date` return y - 7")
    assert (window.start_line, window.end_line) == (36, 38)
    prose = _span("mod.py", MODULE.replace("def f7(", "def parse("))
    assert windows(prose, "parse the input better") == [prose]
    assert [(w.start_line, w.end_line) for w in windows(prose, "make parse() subtract")] == [(36, 38)]


def test_a_line_reference_belongs_to_the_file_named_last_before_it() -> None:
    text = "1. pkg/core.py: after line 61 add X; line 16: export it. 2. tests/test_core.py: append at line 300"
    assert lines_named_in(text, "pkg/core.py") == {16, 61}
    assert lines_named_in(text, "tests/test_core.py") == {300}
    assert lines_named_in("see line 50 of app.py; self.value stays", "app.py") == {50}
    assert lines_named_in("line 50 of app.py", "other.py") == set()


def test_a_shared_budget_carries_small_files_whole_and_the_named_module_first() -> None:
    module, tests = _span("pkg/core.py", MODULE), _span("tests/test_core.py", TESTS)
    init, readme = (
        _span("pkg/__init__.py", "from .core import f0\n__all__ = ['f0']\n\n"),
        _span("README.rst", "x\n" * 113),
    )
    task = "1. pkg/core.py: add g at the end. 2. pkg/__init__.py: export g. 3. tests/test_core.py: tests. 4. README.rst"
    shown = carried([readme, tests, init, module], task, SpanBudget(lines=300, chars=18_000))
    assert [s.path for s in shown] == ["pkg/core.py", "pkg/__init__.py", "tests/test_core.py", "README.rst"]
    sizes = {s.path: s.end_line - s.start_line + 1 for s in shown}
    assert sizes == {"pkg/core.py": 99, "pkg/__init__.py": 3, "tests/test_core.py": 99, "README.rst": 99}
    alone = carried([readme, init, module], task, SpanBudget(lines=300, chars=18_000))
    assert [s.end_line for s in alone] == [184, 3, 113]  # what the small ones leave goes to the rest


def test_a_whole_method_of_a_longer_class_is_not_called_cut() -> None:
    source = b"class C:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n"
    assert open_construct("c.py", source, 3) == ""
    assert open_construct("c.py", source, 4) == ""  # a blank line after the method
    assert open_construct("c.py", source, 5) == "def b (lines 5-6)"


def test_a_coder_packet_carries_the_windows_its_assignment_names_of_a_long_read(tmp_path: Path) -> None:
    files = {"mod.py": MODULE, "test_mod.py": TESTS}
    task = "In mod.py, f20 (line 103) must return y - 20; in test_mod.py add test_f20_subtracts after test_f29."
    turns = [
        call("read_file", "architect", path="mod.py"),
        call("read_file", "architect", path="test_mod.py"),
        call("coder", "architect", task=task),
        say("Nothing done.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, "f20 adds instead of subtracting", turns, files=files)
    [packet] = [e.payload["text"] for e in run.of("context.injected") if e.agent == "coder"]
    assert "--- mod.py lines 101-109 of 200" in packet and " 100| " not in packet and " 110| " not in packet
    assert "--- test_mod.py lines 117-118 of 120" in packet  # the test it is to follow
    assert packet.index("--- mod.py") < packet.index("--- test_mod.py")


def test_a_windowed_python_module_carries_its_import_lines_when_the_assignment_speaks_of_imports() -> None:
    head = '"""Durations."""\n\nimport math\nfrom fractions import Fraction\n\n\n'  # lines 1-6
    span = _span("mod.py", head + MODULE)
    first, second = windows(span, "in mod.py make `f20` return y - 20 and import it in the tests")
    assert (first.start_line, first.end_line) == (1, 4) and "from fractions import Fraction" in first.content
    assert second.content.startswith("def f20(x):")
    assert len(windows(span, "in mod.py make `f20` return y - 20")) == 1  # no import asked for
    assert len(windows(_span("notes.txt", head + MODULE), "in notes.txt make `f20` import less")) == 1


def test_a_name_defined_twice_in_a_read_points_at_no_window_and_a_parenthesised_import_is_kept_whole() -> None:
    twice = MODULE.replace("def f3(", "def validate(").replace("def f9(", "def validate(")
    assert windows(_span("mod.py", twice), "make Schema(x).validate({}) say keys") == [_span("mod.py", twice)]
    head = "from mod import (\n    f1,\n    f2,\n)\nimport os\n\n\n"  # lines 1-7
    first, _ = windows(_span("test_mod.py", head + MODULE), "import f20 and make `f20` subtract")
    assert (first.start_line, first.end_line) == (1, 5)


def test_a_class_too_long_to_show_whole_points_at_no_window() -> None:
    methods = "".join(f"    def m{n}(self):\n        return {n}\n\n" for n in range(50))  # 150 lines
    long_class = '"""Trees."""\n\n\nclass IntervalTree:\n    """A tree."""\n\n' + methods
    span = _span("tree.py", long_class)
    assert windows(span, "`IntervalTree` needs a fix in m3") == [span]  # nothing pointed at: whole
    [window] = windows(span, "`IntervalTree.m30` returns the wrong value: fix `m30`")
    assert window.content.lstrip().startswith("def m30(self):")


def test_a_module_level_name_the_assignment_writes_as_code_travels_to_its_end() -> None:
    head = '"""Numerals."""\n\n__all__ = [\n    "f1",\n    "f2",\n]\n\n\n'  # lines 1-8
    span = _span("roman.py", head + MODULE)
    first, second = windows(span, "add `f40` after f39 and list it in `__all__`")
    assert (first.start_line, first.end_line) == (3, 6) and first.content.startswith("__all__ = [")
    assert second.content.startswith("def f39(x):")
