"""Output journal: everything goes to the artifact once; observations stay bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from protoagent.processes import ExecuteCommandTool, OutputJournal
from protoagent.processes.artifact_cap import CUT_MARKER, DEFAULT_ARTIFACT_CAP, MAX_TAIL
from protoagent.processes.journal import bounded_view
from protoagent.tools.base import ToolContext

from .support import body, run_tool

TOOL = ExecuteCommandTool()
MARKER = "bytes omitted; full output: "


def memory_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"{field} is not in /proc/self/status")


def reset_peak_memory() -> None:
    """Reset VmHWM to the current RSS where the kernel allows it (else growth is overstated)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


@pytest.mark.slow
def test_one_gib_of_output_keeps_harness_memory_bounded_and_caps_the_artifact(ctx: ToolContext) -> None:
    writer = "import sys\nchunk = b'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.buffer.write(chunk)"
    reset_peak_memory()
    before = memory_kib("VmRSS")
    output = run_tool(TOOL, ctx, argv=["python", "-c", writer], timeout=300)
    growth_mib = (memory_kib("VmHWM") - before) / 1024
    artifact = Path(output.data["artifact"])
    try:
        size = artifact.stat().st_size
        print(f"T8 1 GiB of output: harness peak RSS growth {growth_mib:.1f} MiB, artifact {size} bytes")
        assert output.status == "ok", output.text
        assert growth_mib < 64
        marker = CUT_MARKER.format(cut=(1 << 30) - DEFAULT_ARTIFACT_CAP, cap=DEFAULT_ARTIFACT_CAP)
        assert size == DEFAULT_ARTIFACT_CAP + len(marker) + 2
        assert output.text.count(MARKER) == 1
        assert f"[... {size - 8192} {MARKER}{artifact} ...]" in output.text.splitlines()
        assert len(output.text) < 8192 + 200
        with artifact.open("rb") as file:
            file.seek(DEFAULT_ARTIFACT_CAP - MAX_TAIL)
            assert file.read(len(marker) + 2) == f"\n{marker}\n".encode()
    finally:
        artifact.unlink()


def test_observation_keeps_head_and_tail_around_one_marker(ctx: ToolContext) -> None:
    writer = "for i in range(20000): print(f'line {i:05d}')"
    output = run_tool(TOOL, ctx, argv=["python", "-c", writer], output_limit=1000)
    lines = body(output).splitlines()
    assert lines[0] == "line 00000"
    assert lines[-1] == "line 19999"
    assert sum(MARKER in line for line in lines) == 1
    assert output.data["omitted_bytes"] == 20000 * 11 - 1000
    assert Path(output.data["artifact"]).stat().st_size == 20000 * 11


def test_small_output_is_shown_whole(ctx: ToolContext) -> None:
    output = run_tool(TOOL, ctx, argv=["python", "-c", "print('a'); import sys; sys.exit(3)"])
    assert output.text == "exit code: 3\na\n"
    assert output.status == "error"
    assert output.data["exit_code"] == 3
    assert output.artifact == output.data["artifact"]


def test_stderr_is_journalled_with_stdout(ctx: ToolContext) -> None:
    writer = "import sys; print('out', flush=True); print('err', file=sys.stderr)"
    assert body(run_tool(TOOL, ctx, argv=["python", "-c", writer])) == "out\nerr\n"


def test_truncation_never_splits_a_utf8_character(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    path.write_bytes("é".encode() * 1000)
    view = bounded_view(path, 0, 2000, 101)
    assert "\ufffd" not in view.text
    assert view.text.count(MARKER) == 1


def test_journal_holds_back_an_incomplete_utf8_sequence_while_running(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    encoded = "añb".encode()
    path.write_bytes(encoded[:2])
    journal = OutputJournal(path)
    assert journal.consume(100, settled=False).text == "a"
    path.write_bytes(encoded)
    assert journal.consume(100, settled=False).text == "ñb"
    assert journal.consume(100, settled=True).text == ""
