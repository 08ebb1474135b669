"""Input models of the workspace tools; what the model sees of them is their declared schema
(``models.declarations``), so defaults and bounds here are applied, not declared."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

INPUT_CONFIG = ConfigDict(extra="forbid")
REVISION_FIELD = "from read_file or your last edit of this file"


class ReadFileInput(BaseModel):
    model_config = INPUT_CONFIG
    path: str
    start_line: int = Field(1, ge=1)
    end_line: int | None = Field(None, ge=1)
    """Inclusive; omitted, the read goes as far as fits."""


class EditPair(BaseModel):
    model_config = INPUT_CONFIG
    old: str
    new: str


_EDITS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
        "required": ["old", "new"],
    },
}
"""``edits`` inline, so the model sees no ``$defs`` indirection."""


class EditFileInput(BaseModel):
    model_config = INPUT_CONFIG
    path: str
    old: str | None = None
    new: str | None = None
    edits: Annotated[list[EditPair] | None, WithJsonSchema(_EDITS_SCHEMA)] = None
    """The tool's description says what old, new and edits are; the schema does not repeat it."""
    expected_revision: str = Field(description=REVISION_FIELD)


class CreateFileInput(BaseModel):
    model_config = INPUT_CONFIG
    path: str
    content: str


class ReplaceFileInput(BaseModel):
    model_config = INPUT_CONFIG
    path: str
    content: str
    expected_revision: str = Field(description=REVISION_FIELD)


class ListDirectoryInput(BaseModel):
    model_config = INPUT_CONFIG
    path: str = "."


class SearchRegexInput(BaseModel):
    model_config = INPUT_CONFIG
    pattern: str
    path: str = "."
    file_filter: str | None = Field(None, description="glob, e.g. *.py")
