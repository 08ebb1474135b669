"""How often the implicit skill resolver's round trip is skipped, and what that saves.

Method
------
The built-in skills (``load_skills`` with no repository and an empty data home) are the catalog.
For each realistic objective below, ``plausible_skills`` decides whether any implicit skill
shares a meaningful word (stems, stop words removed, ``Not for ...`` clauses of a description
left out) with the request; with none the resolver is skipped. For each objective the script
prints the plausible skills and the resolver request it would have sent, in bytes, as an
OpenAI-compatible request body (compact JSON), and totals the bytes and requests saved.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from protoagent.models.openai_compat import build_request
from protoagent.skills.discovery import load_skills
from protoagent.skills.resolver import plausible_skills, resolver_request

OBJECTIVES = (
    "fix the failing date parser test",
    "rename parse_date to parse_iso_date and update its callers",
    "add a --verbose flag to the CLI that prints each file it processes",
    "naturaldelta(timedelta(hours=36)) says '1 day'; it should say 'a day'",
    "Email field accepts 'a@b' without a top-level domain; reject it",
    "support dotted keys in inline tables, following the rules in AGENTS.md",
    "update the README install section for Python 3.13",
    "where is the date parsing code?",
    "review this change",
    "write a regression test for issue 42: empty strings crash the parser",
    "test_api is flaky on CI; find out why",
    "add type hints to utils.py",
    "Result has no get(): add Result.get(key, default=None) returning the default when missing, with tests and docs",
)


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        index = load_skills((), Path(home))
    eligible = list(index.implicit("coding"))
    print(f"catalog: {', '.join(b.name for b in eligible)}")
    skipped = saved = 0
    for objective in OBJECTIVES:
        plausible = plausible_skills(objective, eligible)
        request = resolver_request(objective, "coding", eligible)
        body = build_request(request, "m", max_tokens_field="max_tokens", json_format="json_object")
        size = len(json.dumps(body, separators=(",", ":")))
        if not plausible:
            skipped += 1
            saved += size
        shown = ", ".join(b.name for b in plausible) or "none: resolver skipped"
        print(f"  {objective[:60]:60s}  {size:5d} B  {shown}")
    print(f"skipped {skipped} of {len(OBJECTIVES)} resolver requests, {saved} request bytes saved")


if __name__ == "__main__":
    main()
