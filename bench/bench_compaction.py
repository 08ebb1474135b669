"""Compaction: tokens per request while a resumed session outgrows its window, and summary sizes.

Method: one session on a real SQLite log, continued turn after turn through ``run_task`` with the
scripted model (each turn a run of its own, as ``--resume``, chat and the web page's "continue"
do). Three scenarios: twelve 8 kB turns on a 20k window (standard profile, the summary written
by the scripted model), the same on an 8k window (small profile, deterministic digest), and fifty
2 kB chat turns with a read of a 9 kB file every third turn on a 20k window (deterministic digest:
the script has no summary turn, so the summary call fails and falls back). Tokens are the
admission estimate (``ceil(bytes / 3.5)``) of each request the model received, output reserve
included. Without compaction the first scenario failed from the ninth turn on ("mandatory
context needs about 20553 tokens but the window is 20000").
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from pathlib import Path
from typing import Any

from protoagent.context.compaction import COMPACTION_AGENT
from protoagent.context.tokens import EstimatingCounter, estimate_request
from protoagent.events import SQLiteStore
from protoagent.models.profile import ProfileRequest
from protoagent.models.registry import ModelConfig
from protoagent.testing import ScriptedModel, make_repo
from protoagent.workflow.run import RunOptions, run_task

COUNTER = EstimatingCounter()
NOTES = "".join(f"NOTE_{n:03d} = {'n' * 60!r}\n" for n in range(120))


def text(n: int, size: int) -> str:
    return (f"turn {n}: consider part {n} of the design. " + f"point {n} needs care; " * (size // 10))[:size]


def scenario(window: int, profile: ProfileRequest, turns: int, size: int, summaries: bool) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp())
    repo = make_repo(folder / "repo", {"notes.py": NOTES})
    store = SQLiteStore(folder / "sessions.db")
    session_id = None
    tokens: list[int] = []
    statuses: list[str] = []
    for n in range(1, turns + 1):
        lines: list[dict[str, Any]] = []
        if size < 4000 and n % 3 == 0:
            call = {"name": "read_file", "arguments": {"path": "notes.py"}, "id": f"r{n}"}
            lines.append({"role": "architect", "tool_calls": [call]})
        lines.append({"role": "architect", "text": f"answer {n}"})
        if summaries:
            lines.append({"role": COMPACTION_AGENT, "text": f"Asked: parts 1 to {n}. Decided: go on. Open: none."})
        model = ScriptedModel.from_lines(lines)
        options = RunOptions(
            repo=repo,
            model="scripted:inline",
            store=store,
            approval="auto",
            provider=model,
            surface="question",
            profile=profile,
            skill_resolver=False,
            model_config=ModelConfig(context_window=window),
            artifacts_root=folder / "artifacts",
            data_home=folder / "home",
            resume=session_id,
        )
        report = asyncio.run(run_task(text(n, size), options))
        session_id, _ = report.session_id, statuses.append(report.status)
        for request in model.requests:
            if request.agent_role == "architect":
                reserve = request.max_output_tokens or 1024
                tokens.append(estimate_request(request, COUNTER, output_reserve=reserve).total)
    assert session_id is not None
    compacted = [e.payload for e in store.load(session_id) if e.type == "context.compacted"]
    return {
        "window": window,
        "profile": profile,
        "turns completed": f"{statuses.count('completed')}/{turns}",
        "requests": len(tokens),
        "tokens per request min/median/max": (min(tokens), int(statistics.median(tokens)), max(tokens)),
        "last request": tokens[-1],
        "compactions": len(compacted),
        "methods": sorted({p["method"] for p in compacted}),
        "summary tokens max": max((p["summary_tokens"] for p in compacted), default=0),
        "summary chars last": len(compacted[-1]["summary"]) if compacted else 0,
        "replaced tokens last": compacted[-1]["replaced_tokens"] if compacted else 0,
    }


def main() -> None:
    for name, args in (
        ("12 x 8 kB, 20k, model summary", (20_000, "standard", 12, 8000, True)),
        ("12 x 8 kB, 8k small, digest", (8000, "small", 12, 8000, True)),
        ("50 x 2 kB chat with reads, 20k, digest", (20_000, "standard", 50, 2000, False)),
    ):
        print(name)
        for key, value in scenario(*args).items():  # type: ignore[arg-type]
            print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
