"""Activation evals under a bundle's ``evals/``: balanced positive and negative requests, with
optional trajectory metadata. They are control-plane fixtures and never enter model context."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protoagent.skills.model import Diagnostic
from protoagent.workspace.confined import read_confined

EVALS_FILE = "evals/activation.json"
MAX_IMBALANCE = 1
"""Positive and negative cases may differ by at most one."""


@dataclass(frozen=True, slots=True)
class EvalCase:
    request: str
    should_activate: bool
    expected_operation: str | None = None
    expected_trajectory: tuple[str, ...] = ()
    forbidden_behaviors: tuple[str, ...] = ()


def load_evals(directory: Path) -> tuple[list[EvalCase], list[Diagnostic]]:
    """Cases of one bundle and the problems that make its evals malformed (errors)."""
    path = directory / EVALS_FILE
    if not path.is_file():
        return [], []
    try:
        data = json.loads(read_confined(directory, EVALS_FILE, limit=1 << 20).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return [], [Diagnostic(str(path), f"evals are not valid JSON ({exc.__class__.__name__})", "error")]
    raw_cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(raw_cases, list) or not raw_cases:
        return [], [Diagnostic(str(path), "evals need a non-empty 'cases' list", "error")]
    cases: list[EvalCase] = []
    problems: list[Diagnostic] = []
    for number, raw in enumerate(raw_cases, start=1):
        case, problem = _case(raw)
        if problem:
            problems.append(Diagnostic(str(path), f"case {number}: {problem}", "error"))
        elif case is not None:
            cases.append(case)
    positives = sum(c.should_activate for c in cases)
    if cases and (not positives or positives == len(cases) or abs(2 * positives - len(cases)) > MAX_IMBALANCE):
        problems.append(
            Diagnostic(
                str(path),
                f"evals are unbalanced: {positives} positive, "
                f"{len(cases) - positives} negative; add near-miss or trigger cases",
                "error",
            )
        )
    return cases, problems


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def _case(raw: Any) -> tuple[EvalCase | None, str | None]:
    if not isinstance(raw, dict):
        return None, "must be an object"
    request, should = raw.get("request"), raw.get("should_activate")
    if not isinstance(request, str) or not request.strip() or not isinstance(should, bool):
        return None, "needs 'request' (text) and 'should_activate' (true/false)"
    operation = raw.get("expected_operation")
    if operation is not None and not (isinstance(operation, str) and operation.strip()):
        return None, "'expected_operation' must be a non-empty string"
    for key in ("expected_trajectory", "forbidden_behaviors"):
        if key in raw and not (_strings(raw[key]) and raw[key]):
            return None, f"{key!r} must be a non-empty list of non-empty strings"
    unknown = set(raw) - {
        "request",
        "should_activate",
        "expected_operation",
        "expected_trajectory",
        "forbidden_behaviors",
    }
    if unknown:
        return None, f"unknown key(s) {sorted(unknown)}"
    return EvalCase(
        request, should, operation, tuple(raw.get("expected_trajectory", ())), tuple(raw.get("forbidden_behaviors", ()))
    ), None
