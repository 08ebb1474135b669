"""The content a workspace write records beside its revisions, so the log can restore and diff it.

A write tool's receipt (``tool.ended`` data) carries ``path``, ``revision_before`` and
``source_revision``; ``write_images`` adds the text itself: ``preimage`` (the replaced text,
``None`` for a new file) and ``afterimage`` (the written text). A file over
``MAX_IMAGE_BYTES`` records ``images_omitted`` instead: its revisions stay exact, but
checkpoints cannot restore it and diffs name it without a body.
"""

from __future__ import annotations

from typing import Any

MAX_IMAGE_BYTES = 1024 * 1024
"""Largest preimage or afterimage, in bytes, a write records in the log."""


def write_images(before: str | None, after: bytes) -> dict[str, Any]:
    """The receipt fields for one write: both texts, or ``images_omitted`` when one is too large."""
    before_size = len(before.encode("utf-8")) if before is not None else 0
    if before_size > MAX_IMAGE_BYTES or len(after) > MAX_IMAGE_BYTES:
        return {"images_omitted": True}
    return {"preimage": before, "afterimage": after.decode("utf-8")}
