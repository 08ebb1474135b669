"""Guided repair: the harness localizes a failing check, the model proposes one-line edits, the
checks decide in a scratch copy, and only a passing edit is applied through the governed pipeline."""

from protoagent.repair.guided import RepairBudget, RepairOutcome, guided_repair, guided_repair_enabled

__all__ = ["RepairBudget", "RepairOutcome", "guided_repair", "guided_repair_enabled"]
