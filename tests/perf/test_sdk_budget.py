"""A caller sets the model-call budget of a run (the SDK's ``run_task``, the agent loop's own turn)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from protoagent import ConfigError, MemoryStore, RunOptions, run_task
from protoagent.agents.presets import get_preset
from protoagent.testing import ScriptedModel, final_turn, tool_turn
from protoagent.testing.agent_turn import run_preset_turn


def script(steps: int) -> ScriptedModel:
    return ScriptedModel.from_lines(
        [tool_turn("search_regex", pattern=f"needle{i}") for i in range(steps)] + [final_turn("done")]
    )


def test_a_turn_stops_at_the_callers_model_call_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROTOAGENT_HOME", str(tmp_path / "home"))
    model, store = script(10), MemoryStore()
    preset = replace(get_preset("coding"), max_steps=50)
    _, outcome = asyncio.run(
        run_preset_turn(
            "look",
            repo=tmp_path,
            model="scripted:x",
            store=store,
            approval="auto",
            preset=preset,
            provider=model,
            max_model_calls=3,
        )
    )
    assert outcome.status == "failed" and "all 3 model calls" in outcome.text
    assert len(model.requests) == 3


def test_a_budget_above_the_default_lets_every_step_call_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROTOAGENT_HOME", str(tmp_path / "home"))
    model = script(90)
    preset = replace(get_preset("coding"), max_steps=100)
    _, outcome = asyncio.run(
        run_preset_turn(
            "look",
            repo=tmp_path,
            model="scripted:x",
            store=MemoryStore(),
            approval="auto",
            preset=preset,
            provider=model,
            max_model_calls=91,
        )
    )
    assert outcome.status == "completed" and outcome.steps == 91 and len(model.requests) == 91


def test_a_budget_below_one_model_call_is_refused_before_anything_runs(tmp_path: Path) -> None:
    store = MemoryStore()
    with pytest.raises(ConfigError, match="max_model_calls 0"):
        asyncio.run(
            run_preset_turn(
                "look", repo=tmp_path, model="scripted:x", store=store, provider=script(1), max_model_calls=0
            )
        )
    assert store.list() == []
    options = RunOptions(repo=tmp_path, model="scripted:x", store=store, provider=script(1), max_model_calls=0)
    with pytest.raises(ConfigError, match="max_model_calls 0"):
        asyncio.run(run_task("look", options))
    assert store.list() == []
