"""A SWE-bench-format instance as the public datasets store it (SWE-bench Lite/Verified, SWE-Gym).

``FAIL_TO_PASS`` and ``PASS_TO_PASS`` are JSON lists or JSON-encoded strings of lists (the
datasets' own spelling); fields the datasets add (``version``, ``created_at``,
``environment_setup_commit`` …) are read and ignored. ``repo`` and ``base_commit`` are checked
strictly, since both become a folder name and a git operand.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_COMMIT = re.compile(r"[0-9a-fA-F]{7,40}\Z")


class SweBenchInstance(BaseModel):
    """One line of an instance file; what a batch task carries to score its patch."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    instance_id: str = Field(min_length=1, max_length=200)
    repo: str
    """``owner/name``; its local clone is ``owner__name`` under ``--repos``."""
    base_commit: str
    """The commit the task starts from and the patch is taken against (7 to 40 hex digits)."""
    problem_statement: str = Field(min_length=1)
    hints_text: str = ""
    test_patch: str = ""
    """Applied only for ``--evaluate``, after the model's patch; the agent never sees it."""
    fail_to_pass: tuple[str, ...] = Field(default=(), alias="FAIL_TO_PASS")
    pass_to_pass: tuple[str, ...] = Field(default=(), alias="PASS_TO_PASS")

    @field_validator("repo")
    @classmethod
    def _owner_name(cls, value: str) -> str:
        if not _REPO.match(value) or ".." in value:
            raise ValueError(f"{value!r} is not owner/name (letters, digits, '-', '_', '.')")
        return value

    @field_validator("base_commit")
    @classmethod
    def _commit_id(cls, value: str) -> str:
        if not _COMMIT.match(value):
            raise ValueError(f"{value!r} is not a commit id (7 to 40 hex digits)")
        return value.lower()

    @field_validator("hints_text", "test_patch", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return "" if value is None else value

    @field_validator("fail_to_pass", "pass_to_pass", mode="before")
    @classmethod
    def _test_ids(cls, value: object) -> object:
        if value is None:
            return ()
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip() else []
            except json.JSONDecodeError:
                raise ValueError("a JSON-encoded string must hold a JSON list of test ids") from None
        if not isinstance(value, list | tuple) or not all(isinstance(item, str) and item for item in value):
            raise ValueError("give a list of test ids (strings), or a JSON-encoded string of one")
        return tuple(value)

    @property
    def clone_name(self) -> str:
        """The datasets' folder name for the repository's clone: ``owner__name``."""
        return self.repo.replace("/", "__")

    def objective(self, hints: bool) -> str:
        """What the agent is asked to do: the problem statement (and the hints when asked)."""
        text = f"Resolve this issue in the repository {self.repo}:\n\n{self.problem_statement.strip()}"
        if hints and self.hints_text.strip():
            text += f"\n\nHints:\n{self.hints_text.strip()}"
        return text
