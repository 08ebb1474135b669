"""The scripted model: replays model turns from JSON Lines. It stands only where a model stands."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protoagent.errors import ConfigError, ProviderError
from protoagent.models.registry import ModelConfig
from protoagent.models.tool_arguments import bounded_arguments
from protoagent.models.types import ModelEvent, ModelRequest, ModelTurn, TextDelta, ToolCall, Usage


@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """One line of a script: the turn a model with ``role`` (or any role) would return."""

    role: str | None = None
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)


class ScriptedModel:
    """Replays turns in order.

    A request from an agent with role R takes the first unused turn whose ``role`` is R,
    else the first unused turn with no role. When nothing fits the provider fails loudly.
    """

    name = "scripted"

    def __init__(self, turns: Iterable[ScriptedTurn], model: str = "script", window: int | None = None) -> None:
        self.model = model
        self.window = window
        """The context window this model reports (a script's ``{"context_window": N}`` line)."""
        self._turns = list(turns)
        self._used = [False] * len(self._turns)
        self._call_counter = 0
        self.requests: list[ModelRequest] = []
        """Every request received, for tests that check what the model was shown."""

    @classmethod
    def from_lines(cls, lines: Iterable[Mapping[str, Any] | str], model: str = "script") -> ScriptedModel:
        turns = []
        window = None
        for number, line in enumerate(lines, start=1):
            where = f"{model} line {number}"
            try:
                data = json.loads(line) if isinstance(line, str) else dict(line)
            except json.JSONDecodeError as exc:
                problem = f"not valid JSON ({exc.msg}); fix or remove that line"
                raise ConfigError(f"model script {where}: {problem}") from None
            except RecursionError:
                raise ConfigError(f"model script {where}: nested too deeply; keep each turn a flat object") from None
            if not isinstance(data, dict):
                raise ConfigError(f"model script {where}: each line must be a JSON object with text or tool_calls")
            if set(data) == {"context_window"}:
                window = _window(data["context_window"], where)
                continue
            turns.append(_parse_turn(data, where))
        return cls(turns, model, window)

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"model script {str(path)!r} is not UTF-8 text; save it as UTF-8 JSON Lines") from None
        except OSError as exc:
            raise ConfigError(f"cannot read model script {str(path)!r}: {exc.strerror}; check the path") from None
        lines = [line for line in text.splitlines() if line.strip()]
        return cls.from_lines(lines, model=str(path))

    def context_window(self) -> int | None:
        """The window a server would report; ``None`` unless the script names one."""
        return self.window

    @property
    def remaining(self) -> int:
        return self._used.count(False)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        index = self._pick(request.agent_role)
        if index is None:
            raise ProviderError(
                f"the model script is exhausted: no unused turn for role {request.agent_role!r} "
                f"({len(self._turns)} turns in {self.model!r}); add a line for that role",
                provider=self.name,
            )
        self._used[index] = True
        turn = self._turns[index]
        calls = tuple(self._with_id(c) for c in turn.tool_calls)
        if turn.text:
            yield TextDelta(turn.text)
        yield ModelTurn(turn.text, calls, turn.usage, "tool_calls" if calls else "stop")

    def _pick(self, role: str) -> int | None:
        fallback = None
        for i, turn in enumerate(self._turns):
            if self._used[i]:
                continue
            if turn.role == role:
                return i
            if turn.role is None and fallback is None:
                fallback = i
        return fallback

    def _with_id(self, call: ToolCall) -> ToolCall:
        if call.id:
            return call
        self._call_counter += 1
        return ToolCall(f"call_{self._call_counter}", call.name, call.arguments)


def _parse_turn(data: dict[str, Any], where: str) -> ScriptedTurn:
    unknown = set(data) - {"role", "text", "tool_calls", "usage"}
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; use role, text, tool_calls, usage")
    calls = []
    raw_calls = data.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ConfigError(f"{where}: 'tool_calls' must be a list of {{name, arguments}} objects")
    for raw in raw_calls:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            raise ConfigError(f"{where}: each tool call needs a 'name' string and an 'arguments' object")
        arguments = raw.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise ConfigError(f"{where}: tool call {raw['name']!r} arguments must be a JSON object")
        calls.append(ToolCall(str(raw.get("id") or ""), raw["name"], bounded_arguments(arguments)))
    role = data.get("role")
    if role is not None and not isinstance(role, str):
        raise ConfigError(f"{where}: 'role' must be a string such as \"architect\"")
    return ScriptedTurn(
        role=role, text=str(data.get("text") or ""), tool_calls=tuple(calls), usage=_usage(data.get("usage"), where)
    )


def _window(raw: Any, where: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ConfigError(f"{where}: 'context_window' must be a whole number of tokens, e.g. 20000")
    return raw


def _usage(raw: Any, where: str) -> Usage:
    usage = raw or {}
    try:
        if not isinstance(usage, dict):
            raise TypeError
        return Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)))
    except (TypeError, ValueError, OverflowError):
        problem = "'usage' must be an object of whole numbers (input_tokens, output_tokens)"
        raise ConfigError(f"{where}: {problem}") from None


def from_spec(rest: str, config: ModelConfig) -> ScriptedModel:
    """``scripted:PATH`` (relative to the config's base directory)."""
    if not rest:
        raise ConfigError("the scripted model needs a script: use --model scripted:PATH (a JSON Lines file)")
    path = Path(rest).expanduser()
    if not path.is_absolute() and config.base_dir is not None:
        path = config.base_dir / path
    return ScriptedModel.from_file(path)
