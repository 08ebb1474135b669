"""Edit round-trip time of the workspace tools on a 5 MB source file.

Method: build a ~5 MB Python-like file (one small function per two lines) in a temporary
workspace. Each round, as a Coder would: read_file a span around a target line (raw text,
standard profile) and take its revision; edit_file that line (prepare, then execute: live
revision check, atomic temp-file write with fsync and rename); then edit the next line with
the returned source_revision instead of reading again. A round is those three calls; rounds
target different lines spread through the file. Two warm-up rounds are discarded, then the
median (and min/max) of ``--rounds`` rounds is printed in milliseconds, with per-phase
medians. Wall-clock time via ``time.perf_counter``; everything runs in one event loop, on
the filesystem holding ``--dir`` (default: the system temp dir), so fsync cost is included.

Run: ``python bench/bench_edit_file.py [--rounds 20] [--size-mb 5] [--dir PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from protoagent.tools.base import ToolContext
from protoagent.workspace.inputs import EditFileInput, ReadFileInput
from protoagent.workspace.tools import EditFileTool, ReadFileTool

FUNCTION = "def handler_{n}(request):\n    return respond(request, code={n})\n"


def build_source(size_bytes: int) -> tuple[str, int]:
    """Return the file text and how many functions it holds."""
    parts: list[str] = []
    size = 0
    count = 0
    while size < size_bytes:
        part = FUNCTION.format(n=count)
        parts.append(part)
        size += len(part)
        count += 1
    return "".join(parts), count


async def one_round(ctx: ToolContext, target: int) -> dict[str, float]:
    reader, editor = ReadFileTool(), EditFileTool()
    line = 2 * target + 2  # The return line of handler_<target>.
    started = time.perf_counter()
    read = await reader.execute(
        reader.prepare(ReadFileInput(path="big.py", start_line=max(line - 5, 1), end_line=None), ctx), ctx
    )
    read_done = time.perf_counter()
    old = f"    return respond(request, code={target})\n"
    if old not in read.data["content"]:
        raise RuntimeError(f"line {line} is not in the span read")
    first_args = EditFileInput(
        path="big.py", old=old, new=old.replace("respond(", "respond_v2("), expected_revision=read.data["revision"]
    )
    first = await editor.execute(editor.prepare(first_args, ctx), ctx)
    first_done = time.perf_counter()
    follow = f"def handler_{target + 1}(request):\n"
    second_args = EditFileInput(
        path="big.py",
        old=follow,
        new=follow.replace("(request)", "(request, /)"),
        expected_revision=first.data["source_revision"],
    )
    await editor.execute(editor.prepare(second_args, ctx), ctx)
    ended = time.perf_counter()
    return {
        "read_file": read_done - started,
        "edit_file": first_done - read_done,
        "edit_file_with_source_revision": ended - first_done,
        "round": ended - started,
    }


async def measure(ctx: ToolContext, functions: int, rounds: int) -> list[dict[str, float]]:
    step = max((functions - 4) // (rounds + 3), 2) | 1  # Odd, so round targets never repeat.
    samples: list[dict[str, float]] = []
    for index in range(rounds + 2):
        result = await one_round(ctx, 1 + index * step)
        if index >= 2:
            samples.append(result)
    return samples


def run(rounds: int, size_mb: float, directory: str | None) -> None:
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        root = Path(tmp).resolve()
        text, functions = build_source(int(size_mb * 1024 * 1024))
        (root / "big.py").write_text(text)
        ctx = ToolContext(session_id="bench", call_id="bench", root=root, agent_role="coder")
        samples = asyncio.run(measure(ctx, functions, rounds))
        size = (root / "big.py").stat().st_size
    print(f"file: {size / 1e6:.2f} MB ({size} bytes), {2 * functions} lines; rounds: {rounds} (+2 warm-up)")
    for phase in ("read_file", "edit_file", "edit_file_with_source_revision", "round"):
        values = [sample[phase] * 1000 for sample in samples]
        print(
            f"{phase:>32}: median {statistics.median(values):7.2f} ms   min {min(values):7.2f}   max {max(values):7.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--size-mb", type=float, default=5.0)
    parser.add_argument("--dir", default=None, help="where to create the temporary workspace")
    args = parser.parse_args()
    run(args.rounds, args.size_mb, args.dir)


if __name__ == "__main__":
    main()
