"""Candidate edits are constrained to what can apply, and come only from the model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from protoagent.repair.candidates import (
    REPAIR_AGENT,
    CandidateEdit,
    ProviderCandidates,
    RepairFocus,
    admissible,
    edit_schema,
    focus_on,
)
from protoagent.repair.localize import localize
from protoagent.testing import ScriptedModel

from .support import FIXED_LINE, OLD_LINE, pytest_output, repo


def _focus(tmp_path: Path) -> RepairFocus:
    root = repo(tmp_path)
    found = localize(root, pytest_output(root))
    assert found is not None
    return focus_on(found, found.functions[0])


def test_schema_enumerates_only_the_shown_file_and_its_exact_lines(tmp_path: Path) -> None:
    focus = _focus(tmp_path)
    schema = edit_schema(focus)
    assert schema["properties"]["path"] == {"enum": ["prices.py"]}
    assert schema["properties"]["old"] == {"enum": [OLD_LINE]}
    assert schema["properties"]["new"]["type"] == "string"
    assert schema["required"] == ["path", "old", "new"]
    assert schema["additionalProperties"] is False


def test_edits_outside_the_schema_or_changing_nothing_are_not_admissible(tmp_path: Path) -> None:
    focus = _focus(tmp_path)
    assert admissible(focus, "other.py", OLD_LINE, FIXED_LINE) is None
    assert admissible(focus, "prices.py", '    """The price after adding tax."""', FIXED_LINE) is None
    assert admissible(focus, "prices.py", OLD_LINE, "a = 1\nb = 2") is None
    assert admissible(focus, "prices.py", OLD_LINE, OLD_LINE.strip()) is None
    edit = admissible(focus, "prices.py", OLD_LINE, "return price * (1 + rate)")
    assert edit == CandidateEdit("prices.py", 6, OLD_LINE, FIXED_LINE)  # indentation of the old line kept


def test_provider_candidates_ask_under_the_schema_and_yield_only_admissible_replies(tmp_path: Path) -> None:
    focus = _focus(tmp_path)
    replies = [
        {"path": "setup.py", "old": OLD_LINE, "new": "import os"},
        {"path": "prices.py", "old": OLD_LINE, "new": FIXED_LINE},
        "not json at all",
    ]
    model = ScriptedModel.from_lines(
        [{"role": REPAIR_AGENT, "text": r if isinstance(r, str) else json.dumps(r)} for r in replies]
    )

    async def collect() -> list[CandidateEdit]:
        return [edit async for edit in ProviderCandidates(model, attempts=5).propose(focus)]

    edits = asyncio.run(collect())
    assert edits == [CandidateEdit("prices.py", 6, OLD_LINE, FIXED_LINE)]
    assert len(model.requests) == 4  # the fourth request found the script exhausted
    request = model.requests[0]
    assert request.output_schema == edit_schema(focus)
    assert request.action_mode == "json"
    assert request.temperature is not None and request.temperature > 0
