"""``protoagent batch TASKS.jsonl``: run a task suite and write ``results.jsonl`` and a summary;
with ``--format swe-bench``, SWE-bench instances, with ``preds.jsonl`` and a local evaluation."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
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


class FormatChoice(StrEnum):
    tasks = "tasks"
    swe_bench = "swe-bench"


@dataclass(frozen=True, slots=True)
class SweBenchFlags:
    """The flags that only ``--format swe-bench`` takes."""

    repos: Path | None
    model: str | None
    model_name: str | None
    hints: bool
    evaluate: bool
    python: Path | None

    @property
    def given(self) -> list[str]:
        named = {"--repos": self.repos, "--model": self.model, "--model-name": self.model_name, "--python": self.python}
        flags = [name for name, value in named.items() if value is not None]
        return flags + [name for name, on in (("--hints", self.hints), ("--evaluate", self.evaluate)) if on]


def batch(
    tasks_file: Annotated[
        Path, typer.Argument(metavar="TASKS.jsonl", help="Task suite (or SWE-bench instances), one JSON object a line.")
    ],
    out: Annotated[Path, typer.Option(help="Folder for results.jsonl, summary.json (and preds.jsonl).")] = Path("."),
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
    file_format: Annotated[
        FormatChoice, typer.Option("--format", help="tasks: our suite format; swe-bench: SWE-bench instances.")
    ] = FormatChoice.tasks,
    repos: Annotated[Path | None, typer.Option(help="swe-bench: the folder of local clones named owner__name.")] = None,
    model: Annotated[str | None, typer.Option(help="swe-bench: the model every instance runs with.")] = None,
    model_name: Annotated[
        str | None, typer.Option(help="swe-bench: model_name_or_path in preds.jsonl (default: --model).")
    ] = None,
    hints: Annotated[bool, typer.Option("--hints", help="swe-bench: add hints_text to the objective.")] = False,
    evaluate: Annotated[
        bool, typer.Option("--evaluate", help="swe-bench: run FAIL_TO_PASS and PASS_TO_PASS on each patch.")
    ] = False,
    python: Annotated[
        Path | None, typer.Option(help="swe-bench: the interpreter tests run under (default: the clone's own).")
    ] = None,
) -> None:
    """Run every task of TASKS.jsonl in its own copy of its repository; write results.jsonl.

    With --format swe-bench, TASKS.jsonl holds SWE-bench instances: each runs on a clone of
    REPOS/owner__name at its base_commit, and preds.jsonl gets the session's patch.

    Exit codes: 0 every task ran and every expectation held, 1 a task errored or an expectation
    failed, 2 usage or configuration error, 130 interrupted (finished tasks are kept).
    """
    from protoagent.api import STORE_FILE, data_home
    from protoagent.batch.engines import LocalEngine, RayEngine
    from protoagent.batch.execute import WorkerSetup
    from protoagent.batch.results import ResultsFile, summarize
    from protoagent.errors import ConfigError
    from protoagent.settings import environment

    swe = SweBenchFlags(repos, model, model_name, hints, evaluate, python)
    try:
        tasks = _load(tasks_file, file_format, swe)
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
    location = store or environment().store or str(home / STORE_FILE)
    interpreter = str(swe.python.absolute()) if swe.python is not None else None
    setup = WorkerSetup(store=location, data_home=str(home), evaluate=swe.evaluate, python=interpreter)
    count = workers or os.cpu_count() or 1
    chosen: Engine = (
        LocalEngine(count) if engine is EngineChoice.local else RayEngine(count, ray_address, cpus_per_task)
    )
    if done:
        typer.echo(f"resuming: {len(done)} of {len(tasks)} tasks already finished", err=True)
    ids = {t.id for t in tasks}
    tally = Tally(len(tasks), [r for r in results.rows() if r["id"] in ids and r["id"] in done])
    try:
        _run_with_progress(chosen, todo, setup, results.append, tally)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    except KeyboardInterrupt:
        kept = len(results.finished_ids())
        _write_preds(out, file_format, swe, tasks, [r for r in results.rows() if r["id"] in ids])
        typer.echo(f"interrupted: {kept} finished tasks are kept in {results.path}; --resume runs the rest", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    rows = [r for r in results.rows() if r["id"] in ids]
    _write_preds(out, file_format, swe, tasks, rows)
    summary = summarize(rows, evaluated=swe.evaluate)
    (out / "summary.json").write_text(json.dumps(summary.to_json(), indent=2) + "\n", encoding="utf-8")
    for line in summary.lines():
        typer.echo(line)
    failed = any(r.get("status") == "error" or r.get("expect_held") is False for r in rows)
    raise typer.Exit(EXIT_EXPECTATIONS if failed else EXIT_OK)


@dataclass(slots=True)
class Tally:
    """How far the batch is: tasks finished and, of SWE-bench tasks, resolved (resumed ones too)."""

    total: int
    rows: list[dict[str, Any]]

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)

    @property
    def finished(self) -> int:
        return len(self.rows)

    @property
    def resolved(self) -> str:
        scored = [r for r in self.rows if r.get("resolved") is not None]
        return f"resolved {sum(1 for r in scored if r['resolved'])}/{len(scored)}" if scored else ""


def _load(path: Path, file_format: FormatChoice, swe: SweBenchFlags) -> list[BatchTask]:
    """The tasks of ``path`` in ``file_format``; a flag the format does not take is refused."""
    from protoagent.batch.swebench import InstanceOptions, load_instances
    from protoagent.batch.tasks import load_tasks
    from protoagent.errors import ConfigError

    if file_format is FormatChoice.tasks:
        if swe.given:
            raise ConfigError(f"{', '.join(swe.given)} go with --format swe-bench only; a task suite names its own")
        return load_tasks(path)
    if swe.repos is None or swe.model is None:
        raise ConfigError("--format swe-bench needs --repos DIR (clones named owner__name) and --model SPEC")
    if swe.python is not None and not swe.evaluate:
        raise ConfigError("--python names the interpreter --evaluate runs the tests under; add --evaluate")
    if swe.python is not None and not (swe.python.is_file() and os.access(swe.python, os.X_OK)):
        raise ConfigError(f"--python {str(swe.python)!r} is not an executable file; give the interpreter's path")
    return load_instances(path, InstanceOptions(repos=swe.repos, model=_model_spec(swe.model), hints=swe.hints))


def _model_spec(spec: str) -> str:
    """A ``scripted:`` path is taken from the current folder, as every worker must find it."""
    prefix = "scripted:"
    if spec.startswith(prefix) and not Path(spec[len(prefix) :]).is_absolute():
        return prefix + str(Path(spec[len(prefix) :]).resolve())
    return spec


def _write_preds(
    out: Path, file_format: FormatChoice, swe: SweBenchFlags, tasks: list[BatchTask], rows: list[dict[str, Any]]
) -> None:
    """``preds.jsonl`` for a SWE-bench batch, in the instance file's order."""
    if file_format is not FormatChoice.swe_bench:
        return
    from protoagent.batch.swebench import write_preds

    order = {t.id: n for n, t in enumerate(tasks)}
    ordered = sorted(rows, key=lambda r: order.get(str(r["id"]), len(order)))
    write_preds(out, ordered, swe.model_name or swe.model or "")


def _run_with_progress(
    engine: Engine, todo: list[BatchTask], setup: WorkerSetup, record: Callable[[dict[str, Any]], None], tally: Tally
) -> None:
    """Run the engine, recording each row as it lands, with a progress bar on a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:

        def plain(row: dict[str, Any]) -> None:
            record(row)
            tally.add(row)
            resolved = f" ({tally.resolved})" if tally.resolved else ""
            line = f"[{tally.finished}/{tally.total}]{resolved} {row['id']}: {_brief(row)}"
            console.print(line, highlight=False, markup=False)

        engine.run(todo, setup, plain)
        return
    columns = (
        TextColumn("batch"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[resolved]}"),
        TextColumn("{task.fields[last]}"),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("tasks", total=tally.total, completed=tally.finished, last="", resolved=tally.resolved)

        def tick(row: dict[str, Any]) -> None:
            record(row)
            tally.add(row)
            progress.update(bar, advance=1, last=f"{row['id']}: {_brief(row)}", resolved=tally.resolved)

        engine.run(todo, setup, tick)


def _brief(row: dict[str, Any]) -> str:
    if row.get("status") == "error":
        return f"error ({row.get('error', '')})"
    held = row.get("expect_held")
    expect = "" if held is None else (", expect held" if held else ", EXPECT FAILED")
    if row.get("resolved") is not None:
        expect += ", resolved" if row["resolved"] else ", not resolved"
    return f"{row.get('status')}, verified={row.get('verified')}{expect}"
