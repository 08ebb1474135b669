"""An input model's JSON schema is built once per process: every session's tools share it, and it
equals the schema built afresh from the same fields."""

from __future__ import annotations

from pydantic import BaseModel

from protoagent.agents.session import builtin_tools
from protoagent.tools.base import input_schema


def test_every_session_shares_one_schema_per_input_model_equal_to_a_fresh_build() -> None:
    first_session, second_session = builtin_tools(), builtin_tools()
    for first, second in zip(first_session, second_session, strict=True):
        model = first.input_model
        assert second.schema().parameters is first.schema().parameters
        same_fields: type[BaseModel] = type(f"Fresh{model.__name__}", (model,), {"__module__": __name__})
        assert input_schema(same_fields) == input_schema(model), first.name
