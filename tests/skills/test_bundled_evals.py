"""Bundled skills carry balanced activation evals; each case runs through the implicit resolver
with the scripted model standing where the model stands, and through the lexical ranker."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from protoagent.skills.catalog import build_catalog, catalog_cap
from protoagent.skills.discovery import discover_skills
from protoagent.skills.evals import load_evals
from protoagent.skills.resolver import resolve_skill
from protoagent.testing import ScriptedModel

BUNDLED = discover_skills((), None).runtime("coding")


@pytest.mark.parametrize("bundle", BUNDLED, ids=[b.name for b in BUNDLED])
def test_bundled_skill_evals_are_balanced_and_pass_through_the_resolver(bundle) -> None:  # type: ignore[no-untyped-def]
    cases, problems = load_evals(bundle.directory)
    assert problems == [] and len(cases) >= 6
    assert sum(c.should_activate for c in cases) * 2 == len(cases)
    for case in cases:
        # The model's answer is scripted from the case; the runtime must accept a correct positive
        # and keep a negative at "no skill", and the request must carry metadata only.
        answer = {"skill": bundle.name if case.should_activate else None, "confidence": 0.9}
        model = ScriptedModel.from_lines([{"role": "skill-resolver", "text": json.dumps(answer)}])
        decision = asyncio.run(resolve_skill(case.request, "coding", BUNDLED, model))
        assert decision.skill == (bundle.name if case.should_activate else None), case.request
        sent = model.requests[0].messages[0].content
        assert case.request in sent and bundle.body.strip()[:40] not in sent
        if case.should_activate:
            # Under a tight catalog budget the relevant routing card must survive.
            tight = build_catalog(BUNDLED, case.request, 8192)
            assert tight.size_bytes <= catalog_cap(8192)
            assert tight.entries and tight.entries[0].name == bundle.name, case.request


def test_malformed_trajectory_metadata_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    cases = [
        {"request": "a", "should_activate": True, "expected_trajectory": "not a list"},
        {"request": "b", "should_activate": False},
    ]
    (tmp_path / "evals/activation.json").write_text(json.dumps({"cases": cases}), encoding="utf-8")
    _, problems = load_evals(tmp_path)
    assert any("expected_trajectory" in p.problem for p in problems)


def test_unbalanced_evals_are_rejected(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    cases = [{"request": r, "should_activate": True} for r in "abc"]
    (tmp_path / "evals/activation.json").write_text(json.dumps({"cases": cases}), encoding="utf-8")
    _, problems = load_evals(tmp_path)
    assert any("unbalanced" in p.problem for p in problems)
