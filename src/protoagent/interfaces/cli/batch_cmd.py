"""``protoagent batch TASKS.jsonl``: run a task suite and write ``results.jsonl`` and a summary."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from protoagent.batch.engines import Engine
    from protoagent.batch.execute import WorkerSetup
    from protoagent.batch.tasks import BatchTask

EXIT_OK = 0
EXIT_EXPECTATIONS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class EngineChoice(StrEnum):
    local = "local"
    ray = "ray"


def batch(
    tasks_file: Annotated[Path, typer.Argument(metavar="TASKS.jsonl", help="Task suite, one JSON object a line.")],
    out: Annotated[Path, typer.Option(help="Folder for results.jsonl and summary.json.")] = Path("."),
    engine: Annotated[EngineChoice, typer.Option(help="local: a process pool; ray: Ray tasks.")] = EngineChoice.local,
    workers: Annotated[int | None, typer.Option(min=1, help="Parallel tasks (default: the CPU count).")] = None,
    ray_address: Annotated[
        str | None, typer.Option(help="Join this Ray cluster (default: start a local instance).")
    ] = None,
    cpus_per_task: Annotated[float, typer.Option(min=0.01, help="CPUs Ray reserves for each task.")] = 1.0,
    resume: Annotated[bool, typer.Option("--resume", help="Skip tasks already in results.jsonl.")] = False,
    store: Annotated[
        str | None,
        typer.Option(help="Session store: a postgresql:// URL or a SQLite path (default $PROTOAGENT_STORE)."),
    ] = None,
) -> None:
    """Run every task of TASKS.jsonl in its own copy of its repository; write results.jsonl.

    Exit codes: 0 every task ran and every expectation held, 1 a task errored or an expectation
    failed, 2 usage or configuration error, 130 interrupted (finished tasks are kept).
    """
    from protoagent.api import STORE_FILE, data_home
    from protoagent.batch.engines import LocalEngine, RayEngine
    from protoagent.batch.execute import WorkerSetup
    from protoagent.batch.results import ResultsFile, summarize
    from protoagent.batch.tasks import load_tasks
    from protoagent.errors import ConfigError
    from protoagent.events.stores import STORE_ENV

    try:
        tasks = load_tasks(tasks_file)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    results = ResultsFile(out)
    done = results.finished_ids() if resume else set()
    if not resume and results.path.exists() and results.path.stat().st_size:
        typer.echo(f"error: {results.path} already has results; pass --resume to continue it or pick --out", err=True)
        raise typer.Exit(EXIT_USAGE)
    todo = [t for t in tasks if t.id not in done]
    home = data_home()
    location = store or os.environ.get(STORE_ENV) or str(home / STORE_FILE)
    setup = WorkerSetup(store=location, data_home=str(home))
    count = workers or os.cpu_count() or 1
    chosen: Engine = (
        LocalEngine(count) if engine is EngineChoice.local else RayEngine(count, ray_address, cpus_per_task)
    )
    if done:
        typer.echo(f"resuming: {len(done)} of {len(tasks)} tasks already finished", err=True)
    try:
        _run_with_progress(chosen, todo, setup, results.append, len(tasks), len(tasks) - len(todo))
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    except KeyboardInterrupt:
        kept = len(results.finished_ids())
        typer.echo(f"interrupted: {kept} finished tasks are kept in {results.path}; --resume runs the rest", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    rows = [r for r in results.rows() if r["id"] in {t.id for t in tasks}]
    summary = summarize(rows)
    (out / "summary.json").write_text(json.dumps(summary.to_json(), indent=2) + "\n", encoding="utf-8")
    for line in summary.lines():
        typer.echo(line)
    failed = any(r.get("status") == "error" or r.get("expect_held") is False for r in rows)
    raise typer.Exit(EXIT_EXPECTATIONS if failed else EXIT_OK)


def _run_with_progress(
    engine: Engine,
    todo: list[BatchTask],
    setup: WorkerSetup,
    record: Callable[[dict[str, Any]], None],
    total: int,
    already: int,
) -> None:
    """Run the engine, recording each row as it lands, with a progress bar on a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        finished = already

        def plain(row: dict[str, Any]) -> None:
            nonlocal finished
            record(row)
            finished += 1
            console.print(f"[{finished}/{total}] {row['id']}: {_brief(row)}", highlight=False, markup=False)

        engine.run(todo, setup, plain)
        return
    columns = (
        TextColumn("batch"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[last]}"),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("tasks", total=total, completed=already, last="")

        def tick(row: dict[str, Any]) -> None:
            record(row)
            progress.update(bar, advance=1, last=f"{row['id']}: {_brief(row)}")

        engine.run(todo, setup, tick)


def _brief(row: dict[str, Any]) -> str:
    if row.get("status") == "error":
        return f"error ({row.get('error', '')})"
    held = row.get("expect_held")
    expect = "" if held is None else (", expect held" if held else ", EXPECT FAILED")
    return f"{row.get('status')}, verified={row.get('verified')}{expect}"
