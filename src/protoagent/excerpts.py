"""Bounded excerpts of untrusted text, for error messages, feedback to the model and the log.

Whatever a model or a repository hands us may be megabytes long; a rejection quotes at most an
excerpt (head and tail with the cut marked), so feedback and the session log stay small.
"""

from __future__ import annotations

EXCERPT_CHARS = 200
"""The default length of an excerpt, in characters."""


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` itself when short, else its head and tail around a marker naming the cut size."""
    if len(text) <= limit:
        return text
    keep = max(limit // 2, 1)
    cut = len(text) - 2 * keep
    return f"{text[:keep]}…[{cut} characters cut]…{text[-keep:]}"
