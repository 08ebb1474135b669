"""Test doubles that ship with the package: the scripted model and repository builders."""

from protoagent.testing.repos import final_turn, make_repo, tool_turn, write_script
from protoagent.testing.scripted import ScriptedModel, ScriptedTurn

__all__ = ["ScriptedModel", "ScriptedTurn", "final_turn", "make_repo", "tool_turn", "write_script"]
