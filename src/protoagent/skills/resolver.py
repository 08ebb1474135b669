"""The implicit resolver: a pre-model stage that asks for one structured decision (one exact
eligible skill or none). It sees only the latest request, the mode and Tier-1 metadata; it never
sees bodies, repository or tool output, and never runs tools. Any failure is non-fatal."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from protoagent.errors import ProviderError
from protoagent.models.protocol import ModelProvider
from protoagent.models.types import Message, ModelRequest, ModelTurn
from protoagent.skills.model import AppMode, SkillBundle

MIN_CONFIDENCE = 0.6
RESOLVER_ROLE = "skill-resolver"
RESOLVER_SYSTEM = (
    "Decide whether one of the listed skills clearly fits the request. Reply with JSON only: "
    '{"skill": NAME or null, "confidence": 0..1}. NAME must be copied exactly from the list. '
    "Choose null when no skill clearly fits."
)
_WORD = re.compile(r"[a-z0-9]+")
_NEGATIVE_CLAUSE = re.compile(r"(?:^|(?<=[.!?;]))\s*not\b[^.!?;]*[.!?;]?", re.I)
"""``Not for ...`` clauses of a description say when a skill does *not* fit."""
_SUFFIXES = ("ing", "ed", "es", "s", "e")
STOP_WORDS = frozenset(
    """a about after all also an and any are as at be been before but by can could do does done
    for from get has have how i if in into is it its just me my need no not of on one or our out
    please should so some than that the their them then there these this those to up us use used
    using was we what when where which while who why will with would you your
    add change code doc docs edit file files fix make missing new test tests update without
    only never always even still exactly instead name named names raise raises raised check checks""".split()
)
"""Function words and the generic verbs and nouns of any coding request; sharing only these with a
skill's metadata says nothing about whether it fits ("with tests and docs" ends many a feature
request; a skill for tests is still met by its own words: failing, regression, flaky, CI)."""


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


_STOP_STEMS = STOP_WORDS | {_stem(w) for w in STOP_WORDS}
MIN_SHARED_DESCRIPTION_WORDS = 2
SKIPPED_REASON = "no eligible skill shares a word of its name or two of its description with the request"


def meaningful_words(text: str) -> frozenset[str]:
    """Stems of the words of ``text`` that are not stop words (``failing`` and ``fails`` share ``fail``)."""
    stems = {_stem(w) for w in _WORD.findall(text.lower()) if len(w) > 1}
    return frozenset(stems - _STOP_STEMS)


_CODE_SPAN = re.compile(r"`[^`]*`")
_CODE_MARKS = frozenset("_()[]{}=<>/\\.:'\"")


def prose(text: str) -> str:
    """``text`` without its code: `quoted` spans and tokens with code marks inside them
    (``check_validity_of('port')``, ``Validator().allow_ports``); a word's trailing punctuation is
    not a mark."""
    kept = []
    for token in _CODE_SPAN.sub(" ", text).split():
        word = token.strip(".,;:!?\"'")
        if not any(mark in word for mark in _CODE_MARKS):
            kept.append(word)
    return " ".join(kept)


def plausible_skills(request_text: str, eligible: Sequence[SkillBundle]) -> list[SkillBundle]:
    """The eligible skills that share a meaningful word of their name, or two of their description
    (less its ``Not for ...`` clauses), with the request's prose: only these could the resolver
    honestly select, so with none the resolver's round trip is skipped. One incidental
    description word ("a *named* test", "a *fixed* issue") is not enough, and the request's code
    says what it is about, not what to do (``check_validity_of`` does not ask for a check)."""
    wanted = meaningful_words(prose(request_text))
    if not wanted:
        return []
    return [
        b
        for b in eligible
        if wanted & meaningful_words(b.name.replace("-", " "))
        or len(wanted & meaningful_words(_NEGATIVE_CLAUSE.sub(" ", b.description))) >= MIN_SHARED_DESCRIPTION_WORDS
    ]


@dataclass(frozen=True, slots=True)
class Decision:
    """The validated outcome. ``skill`` is set only when every check passed."""

    skill: str | None
    confidence: float = 0.0
    reason: str = ""

    def to_json(self) -> dict[str, object]:
        return {"skill": self.skill, "confidence": self.confidence, "reason": self.reason}


def resolver_schema(names: Sequence[str]) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {
            "skill": {"anyOf": [{"enum": list(names)}, {"type": "null"}]},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["skill", "confidence"],
    }


def resolver_request(request_text: str, mode: AppMode, eligible: Sequence[SkillBundle]) -> ModelRequest:
    """The whole resolver input: latest request, mode, and name + description of each eligible skill."""
    listing = "\n".join(f"- {b.name}: {b.description}" for b in eligible)
    user = f"Mode: {mode}\nSkills:\n{listing}\n\nRequest:\n{request_text}"
    return ModelRequest(
        system=RESOLVER_SYSTEM,
        messages=(Message("user", user),),
        action_mode="json",
        output_schema=resolver_schema([b.name for b in eligible]),
        max_output_tokens=48,
        temperature=0.0,
        agent_role=RESOLVER_ROLE,
    )


async def resolve_skill(
    request_text: str, mode: AppMode, eligible: Sequence[SkillBundle], provider: ModelProvider
) -> Decision:
    """One structured decision, validated for mode, policy, exact identity and confidence."""
    if not eligible:
        return Decision(None, reason="no eligible skills")
    final: ModelTurn | None = None
    try:
        async for item in provider.stream(resolver_request(request_text, mode, eligible)):
            if isinstance(item, ModelTurn):
                final = item
    except ProviderError as exc:
        return Decision(None, reason=f"resolver failed: {exc}")
    if final is None:
        return Decision(None, reason="resolver returned no decision")
    return validate_decision(final.text, mode, eligible)


def validate_decision(text: str, mode: AppMode, eligible: Sequence[SkillBundle]) -> Decision:
    match = re.search(r"\{.*\}", text, re.S)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or "skill" not in data:
        return Decision(None, reason="resolver reply is not a {skill, confidence} object")
    skill, confidence = data.get("skill"), data.get("confidence")
    if not isinstance(confidence, int | float) or isinstance(confidence, bool) or not 0 <= confidence <= 1:
        return Decision(None, reason="resolver confidence is missing or outside 0..1")
    if skill is None:
        return Decision(None, float(confidence), "resolver chose no skill")
    by_name = {b.name: b for b in eligible}
    bundle = by_name.get(skill) if isinstance(skill, str) else None
    if bundle is None:
        return Decision(None, float(confidence), f"resolver named {skill!r}, which is not an eligible skill")
    if not (bundle.implicit and bundle.available_in(mode) and bundle.valid):
        return Decision(None, float(confidence), f"skill {skill!r} is not implicit in {mode} mode")
    if confidence < MIN_CONFIDENCE:
        return Decision(None, float(confidence), f"confidence {confidence} is below {MIN_CONFIDENCE}")
    return Decision(bundle.name, float(confidence), "selected")
