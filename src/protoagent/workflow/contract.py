"""``RunContract``: the per-turn surface (conversation, question, verification, editing)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal, cast

from protoagent.errors import ProviderError
from protoagent.json_form import json_form
from protoagent.models.protocol import ModelProvider
from protoagent.models.types import Message, ModelRequest, ModelTurn

Surface = Literal["conversation", "question", "verification", "editing"]
SURFACES: tuple[Surface, ...] = ("conversation", "question", "verification", "editing")

_EDIT_VERBS = (
    r"(fix|add|implement|change|refactor|rename|remove|delete|update|write|create|make|move|edit|improve|"
    r"support|replace|rewrite|repair|correct|patch|bump|migrate|convert)"
)
_EDIT = re.compile(rf"\b{_EDIT_VERBS}\b", re.I)
_IMPERATIVE = re.compile(
    r"(?:^|[.!;:\n]\s*|\?\s+)"
    r"(?:(?:please|now|then|also|just|ok|okay|so|and)[,\s]+|go ahead and\s+)*"
    r"(?:(?:can|could|would|will)\s+(?:you|we)\s+(?:please\s+)?|let'?s\s+|"
    r"i\s+(?:want|need|would like|'d like)\s+(?:you\s+)?to\s+)?"
    rf"{_EDIT_VERBS}\b",
    re.I,
)
"""An edit verb heading a sentence, bare or behind a courtesy ("can you fix", "please add")."""
_JOINED_EDIT = re.compile(rf"\b(?:and|then)\s+(?:please\s+)?{_EDIT_VERBS}\b", re.I)
"""An edit verb joined to a statement ("explain the bug and fix it"); not inside a question."""
_CHAT = re.compile(
    r"^\s*(hi|hello|hey|thanks|thank you|good (morning|afternoon|evening)|who are you|"
    r"what can you do|how are you)\b",
    re.I,
)
_VERIFY = re.compile(r"^\s*(please\s+)?(run|execute|verify|check)\b.*\b(tests?|checks?|suite|build|lint)\b", re.I)
_QUESTION = re.compile(
    r"^\s*(what|where|why|how|which|who|when|explain|describe|show me|list|is|are|does|do|can)\b", re.I
)
_SYMPTOM = re.compile(
    r"\b(?:returns?|gives?|yields?|raises?|produces?|outputs?|prints?|says?|shows?|evaluates to|is|are)\b[^?]*"
    r"\b(?:instead of|rather than|but (?:it )?should|when it should|but expected)\b|"
    r"\w\([^()\n]*\)\s+(?:now\s+|still\s+|always\s+)?(?:returns?|gives?|yields?|raises?|produces?|is|=)\s|"
    r"\b(?:expected|wanted)\b[^?]*\bbut (?:got|it (?:returns?|gives?|raises?)|returns?)\b|"
    r"\b(?:is|are) (?:wrong|broken|incorrect)\b|\b(?:fails?|crash(?:es)?|breaks)\b",
    re.I,
)
"""A bug report without an imperative: a call and what it returns, what it does instead of what
it should, or that something fails ("parse_size('1 kB') returns 1024")."""
_WORKSPACE_OBJECT = (
    r"(?:\s+(?:anything|any\s+(?:code|files?|source)|any|(?:the\s+|my\s+|our\s+)?(?:code|files?|source|repo|"
    r"repository|codebase|workspace|working\s+tree)))?"
)
_READ_ONLY = re.compile(
    rf"\b(?:don'?t|do not|without)\s+(?:change|chang|modify|edit|touch|writ)\w*{_WORKSPACE_OBJECT}"
    r"(?=\s*(?:[.,;:!?)]|$)|\s+(?:just|only|and|but|please|yet|for now|at all)\b)|"
    r"\b(?:be|stay|keep (?:it|this)|this is|in|as a)\s+read[- ]only\b|^\s*read[- ]only\b|"
    r"\bread[- ]only\s*(?:[.,;:!?)]|$|please\b)|\b(?:make|with|and) no changes\b(?!\s+to\b)",
    re.I,
)
"""The person asks that nothing in the workspace change ("don't change any files", "explain it
without editing anything", "read-only: ..."); a behaviour the change must keep ("without modifying
the input", "don't change the public API", "add a read-only property") is not that."""
_DEFER = re.compile(
    r"\b(don'?t|do not)\s+run\s+(it|them|the\s+(tests?|checks?))\b|\bi'?ll\s+(do|run)\s+it\b|"
    r"\bi will (run|verify)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class RunContract:
    """The structured decision for one turn."""

    surface: Surface
    source: Literal["forced", "rules", "model", "fallback"]
    reason: str
    read_only: bool = False
    """The person asked for no changes: file writes are denied whatever the surface."""
    defer_verification: bool = False
    """The person will run the checks: verification is deferred at once."""

    def to_json(self) -> dict[str, object]:
        return json_form(self)


def classify(objective: str) -> tuple[Surface, str] | None:
    """Deterministic rules; ``None`` when the request is not clearly one surface."""
    text = objective.strip()
    edits = bool(_EDIT.search(text))
    if _CHAT.match(text) and len(text.split()) <= 8 and not edits:
        return "conversation", "a greeting or conversational remark"
    if _VERIFY.match(text) and not edits:
        return "verification", "asks to run checks without changing code"
    if (text.endswith("?") or _QUESTION.match(text)) and not _asks_to_change(text):
        if edits:
            return "question", "a question about the repository; it asks for no change"
        return "question", "a question about the repository"
    if edits:
        return "editing", "asks for a change"
    if _SYMPTOM.search(text):
        return "editing", "reports a bug: the behaviour it describes is to be corrected"
    return None


def reports_bug(text: str) -> bool:
    """A bug report without an imperative ("parse_size('1 kB') returns 1024 instead of 1000")."""
    return _SYMPTOM.search(text) is not None


def _asks_to_change(text: str) -> bool:
    """An imperative to change code: an edit verb heading a sentence (courtesy allowed), or joined
    to a statement. An edit verb inside a question ("what did we change?") is not one."""
    if _IMPERATIVE.search(text):
        return True
    statements = (part for part in re.split(r"(?<=[.!?\n])", text) if not part.rstrip().endswith("?"))
    return any(_JOINED_EDIT.search(part) for part in statements)


async def select_contract(
    objective: str, forced: Surface | None = None, provider: ModelProvider | None = None
) -> RunContract:
    """Forced surface, else rules, else one structured model decision, else the fallback."""
    read_only = bool(_READ_ONLY.search(objective))
    defer = bool(_DEFER.search(objective))
    if forced is not None:
        return RunContract(forced, "forced", "chosen with --surface", read_only, defer)
    ruled = classify(objective)
    if ruled is not None:
        surface, reason = ruled
        if read_only and surface == "editing":
            surface, reason = "question", "asks for no changes"
        return RunContract(surface, "rules", reason, read_only, defer)
    if provider is not None:
        decided = await _ask_model(objective, provider)
        if decided is not None:
            surface = "question" if read_only and decided == "editing" else decided
            return RunContract(surface, "model", "structured decision by the model", read_only, defer)
    fallback: Surface = "question" if read_only else "editing"
    return RunContract(fallback, "fallback", "no rule matched and no valid model decision", read_only, defer)


ROUTER_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"surface": {"type": "string", "enum": list(SURFACES)}},
    "required": ["surface"],
    "additionalProperties": False,
}
"""The one JSON object the classifier may answer with; providers constrain or request it."""
ROUTER_PROMPT = (
    'Classify the request. Reply with only the JSON object {"surface": S}, where S is one of '
    + ", ".join(f'"{s}"' for s in SURFACES)
    + "."
)
ROUTER_MAX_TOKENS = 64
"""Room for the longest answer, even spaced out in a fenced block, at one token per character
(``{"surface": "verification"}`` is 27 characters)."""


def router_request(objective: str) -> ModelRequest:
    """The classifier's request: its prompt, output schema and token budget describe one answer."""
    return ModelRequest(
        system=ROUTER_PROMPT,
        messages=(Message("user", objective),),
        action_mode="json",
        output_schema=ROUTER_SCHEMA,
        max_output_tokens=ROUTER_MAX_TOKENS,
        agent_role="router",
    )


async def _ask_model(objective: str, provider: ModelProvider) -> Surface | None:
    request = router_request(objective)
    final: ModelTurn | None = None
    try:
        async for item in provider.stream(request):
            if isinstance(item, ModelTurn):
                final = item
    except ProviderError:
        return None
    if final is None:
        return None
    match = re.search(r"\{.*\}", final.text, re.S)
    try:
        surface = json.loads(match.group(0)).get("surface") if match else None
    except (json.JSONDecodeError, AttributeError):
        return None
    return cast(Surface, surface) if surface in SURFACES else None
