"""``ModelSlots``: one object per GGUF file and context size in this process, all closed at exit."""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


class ModelSlots(Generic[T]):
    """Makes the object for a file and context size on first use (under a lock, so once) and hands
    the same one out after; the first one made registers ``close_all`` to run at exit."""

    def __init__(self, make: Callable[[Path, int], T], close: Callable[[T], None]) -> None:
        self._make = make
        self._close = close
        self._slots: dict[tuple[str, int], T] = {}
        self._lock = threading.Lock()

    def get(self, path: Path, n_ctx: int) -> T:
        key = (str(path), n_ctx)
        with self._lock:
            held = self._slots.get(key)
            if held is None:
                held = self._make(path, n_ctx)
                if not self._slots:
                    atexit.register(self.close_all)
                self._slots[key] = held
            return held

    def close_all(self) -> None:
        """Close and forget every object made so far."""
        with self._lock:
            held = list(self._slots.values())
            self._slots.clear()
        for item in held:
            self._close(item)
