"""One layered configuration: defaults < user settings < project < environment < flags. The
environment layer is parsed in one place; every interface builds a run's options through
``run_options``, so a layer a person set reaches every run the same way."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from protoagent.events import MemoryStore
from protoagent.settings import environment, set_agent
from protoagent.workflow.limits import STANDARD_LIMITS, limits_for
from protoagent.workflow.run_options import run_options


def test_the_environment_layer_is_parsed_once_into_typed_values(tmp_path: Path) -> None:
    unset = environment({})
    assert unset.home == Path.home() / ".protoagent" and unset.store is None and unset.local_probe
    assert unset.coder_windows is None and unset.run_seconds is None and unset.sandbox_backends is None
    env = environment(
        {
            "PROTOAGENT_HOME": str(tmp_path),
            "PROTOAGENT_STORE": "postgresql://db/x",
            "PROTOAGENT_CODER_MAX_WINDOWS": "9",
            "PROTOAGENT_RUN_SECONDS": "not a number",
            "PROTOAGENT_SANDBOX_BACKENDS": " bwrap , ",
            "PROTOAGENT_LOCAL_PROBE": "Off",
        }
    )
    assert env.home == tmp_path and env.store == "postgresql://db/x" and env.coder_windows == 3
    assert env.run_seconds is None and env.sandbox_backends == frozenset({"bwrap"}) and not env.local_probe


def test_the_environment_overrides_the_profiles_budgets_and_a_caller_overrides_both() -> None:
    limits = limits_for("standard", 7, {"PROTOAGENT_CODER_MAX_WINDOWS": "1", "PROTOAGENT_RUN_SECONDS": "0"})
    assert (limits.model_calls, limits.coder_windows, limits.seconds) == (7, 1, None)
    assert limits_for("small", environ={"PROTOAGENT_RUN_SECONDS": "-"}).seconds == 100.0
    assert limits_for("standard", environ={}) == STANDARD_LIMITS


def test_user_settings_reach_a_run_unless_the_interface_resolved_the_agents_itself(tmp_path: Path) -> None:
    home, store = tmp_path / "home", MemoryStore()
    defaults = run_options(tmp_path, "local", store, None)
    assert (defaults.tester, defaults.scout, defaults.mcp) == (True, False, False)
    assert defaults.data_home is None and defaults.artifacts_root is None
    set_agent(home, "tester", False)
    set_agent(home, "scout", True)
    user = run_options(tmp_path, "local", store, home)
    assert (user.tester, user.scout, user.mcp) == (False, True, False)
    assert user.data_home == home and user.artifacts_root == home / "artifacts"
    suite = run_options(tmp_path, "local", store, home, agents={})
    assert (suite.tester, suite.scout) == (True, False)  # a batch suite keeps the defaults
    flags = replace(user, tester=True, approval="auto")
    assert flags.tester and flags.approval == "auto" and flags.scout
