"""Input models of the workspace tools; their JSON schemas are what the model sees, so stay short."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def _compact_schema(schema: dict[str, Any]) -> None:
    """Keep the JSON schema the model sees short: no titles, no ``anyOf`` with null."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
        variants = prop.get("anyOf")
        if isinstance(variants, list) and {"type": "null"} in variants and len(variants) == 2:
            del prop["anyOf"]
            prop.update(next(v for v in variants if v != {"type": "null"}))
            if prop.get("default", 0) is None:
                del prop["default"]


INPUT_CONFIG = ConfigDict(extra="forbid", json_schema_extra=_compact_schema)
PATH_FIELD = "Workspace-relative path."
REVISION_FIELD = "revision from read_file, or source_revision from your last edit of this file."


class ReadFileInput(BaseModel):
    model_config = INPUT_CONFIG
    path: str = Field(description=PATH_FIELD)
    start_line: int = Field(1, ge=1, description="First line (1-based).")
    end_line: int | None = Field(None, ge=1, description="Last line, inclusive; omit to read as far as fits.")


class EditFileInput(BaseModel):
    model_config = INPUT_CONFIG
    path: str = Field(description=PATH_FIELD)
    old: str = Field(description="Exact text to replace; must occur exactly once.")
    new: str = Field(description="Replacement text.")
    expected_revision: str = Field(description=REVISION_FIELD)


class CreateFileInput(BaseModel):
    model_config = INPUT_CONFIG
    path: str = Field(description=PATH_FIELD)
    content: str = Field(description="Full content of the new file.")


class ReplaceFileInput(BaseModel):
    model_config = INPUT_CONFIG
    path: str = Field(description=PATH_FIELD)
    content: str = Field(description="New full content of the file.")
    expected_revision: str = Field(description=REVISION_FIELD)


class ListDirectoryInput(BaseModel):
    model_config = INPUT_CONFIG
    path: str = Field(".", description=PATH_FIELD)


class SearchRegexInput(BaseModel):
    model_config = INPUT_CONFIG
    pattern: str = Field(description="Python regular expression, matched per line.")
    path: str = Field(".", description="File or directory.")
    file_filter: str | None = Field(None, description="Glob on file names, e.g. *.py")
