"""Scout's tools: ``fetch_url`` and ``web_search``, public-web evidence behind approval.

``RunServices`` read: ``scout_allow_hosts`` (non-public hosts a person allows, see
``web_guard``) and ``search_endpoint`` (a URL template with ``{query}`` answering JSON; the
``PROTOAGENT_SEARCH_URL`` environment variable is the fallback). Every call is an ``execute``
effect: network access needs approval, and the preview names the exact URL and limits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus

from pydantic import BaseModel, ConfigDict, Field

from protoagent.errors import ToolRejected
from protoagent.integrations.html_text import html_to_text
from protoagent.integrations.untrusted import clip, untrusted_header
from protoagent.integrations.web_fetch import (
    DEFAULT_TIMEOUT_S,
    MAX_BODY_BYTES,
    MAX_REDIRECTS,
    Fetched,
    FetchFailed,
    FetchLimits,
    fetch,
)
from protoagent.integrations.web_guard import HostAllowList, check_url
from protoagent.settings import SEARCH_URL_ENV, environment
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput


class FetchUrlInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="Full http:// or https:// URL of a public page or JSON document.")
    max_chars: int = Field(6000, ge=200, le=50_000, description="Most characters of text to return.")


class WebSearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=500, description="What to search the web for.")
    max_results: int = Field(5, ge=1, le=20, description="Most results to return.")


@dataclass(frozen=True, slots=True)
class _Plan:
    url: str
    allow: HostAllowList
    limits: FetchLimits
    max_chars: int = 0
    max_results: int = 0


def _allow_list(ctx: ToolContext) -> HostAllowList:
    return HostAllowList.from_service(ctx.services.scout_allow_hosts)


def _limits_text(limits: FetchLimits) -> str:
    return (
        f"timeout {limits.timeout_s:g} s, reads at most {limits.max_bytes} bytes, "
        f"follows at most {MAX_REDIRECTS} redirects (each checked by the same rules)"
    )


async def _get(plan: _Plan) -> Fetched | ToolOutput:
    """The response, or an error output when the network or server failed."""
    try:
        return await fetch(plan.url, plan.allow, plan.limits)
    except FetchFailed as failure:
        return ToolOutput(str(failure), status="error", data={"url": plan.url})


class FetchUrlTool(Tool[FetchUrlInput, _Plan]):
    name = "fetch_url"
    description = (
        "Fetch a public web page or JSON document and return its readable text, marked as untrusted "
        "external evidence. Needs approval."
    )
    metadata = ToolMetadata(effect="execute")

    def prepare(self, args: FetchUrlInput, ctx: ToolContext) -> Prepared[_Plan]:
        allow = _allow_list(ctx)
        checked = check_url(args.url, allow)
        plan = _Plan(checked.url, allow, FetchLimits(), max_chars=args.max_chars)
        preview = f"GET {checked.url}\n{_limits_text(plan.limits)}; returns at most {args.max_chars} characters"
        return Prepared(preview, "execute", state=plan)

    async def execute(self, prepared: Prepared[_Plan], ctx: ToolContext) -> ToolOutput:
        plan = prepared.state
        got = await _get(plan)
        if isinstance(got, ToolOutput):
            return got
        raw = got.text()
        readable = html_to_text(raw) if got.content_type in ("text/html", "application/xhtml+xml") else raw
        text, clipped = clip(readable.strip(), plan.max_chars)
        notes = [f"status {got.status}", got.content_type, f"{len(text)} of {len(readable)} characters"]
        if got.truncated:
            notes.append(f"body cut at {plan.limits.max_bytes} bytes")
        body = f"{untrusted_header(got.url)}\n{'; '.join(notes)}\n---\n{text}"
        if clipped:
            body += f"\n[truncated at {plan.max_chars} characters]"
        data = {
            "url": plan.url,
            "final_url": got.url,
            "status": got.status,
            "content_type": got.content_type,
            "chars": len(text),
            "truncated": clipped or got.truncated,
        }
        return ToolOutput(body, status="error" if got.status >= 400 else "ok", data=data)


def search_endpoint(ctx: ToolContext) -> str | None:
    value = ctx.services.search_endpoint or environment().search_url
    return str(value) if value else None


def parse_results(payload: Any) -> list[dict[str, str]]:
    """Results from ``[{"title", "url", "snippet"}]`` or SearxNG's ``{"results": [{..., "content"}]}``."""
    items = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        raise ValueError("expected a JSON list of results or an object with a 'results' list")
    results = []
    for item in items:
        if isinstance(item, dict) and item.get("url"):
            snippet = item.get("snippet") or item.get("content") or ""
            results.append({"title": str(item.get("title") or ""), "url": str(item["url"]), "snippet": str(snippet)})
    return results


class WebSearchTool(Tool[WebSearchInput, _Plan]):
    name = "web_search"
    description = (
        "Search the web through the configured search endpoint; returns titles, URLs and snippets "
        "marked as untrusted external evidence. Needs approval."
    )
    metadata = ToolMetadata(effect="execute")

    def prepare(self, args: WebSearchInput, ctx: ToolContext) -> Prepared[_Plan]:
        template = search_endpoint(ctx)
        if template is None or "{query}" not in template:
            raise ToolRejected(
                "web search is not configured: set the environment variable "
                f"{SEARCH_URL_ENV} to a search URL with '{{query}}' that answers JSON, for example "
                "http://127.0.0.1:8888/search?format=json&q={query} for a SearxNG instance "
                "(or give the session service 'search_endpoint'). fetch_url works without it.",
                kind="search_unavailable",
                details={"env": SEARCH_URL_ENV, "configured": template is not None},
            )
        url = template.replace("{query}", quote_plus(args.query.strip()))
        allow = _allow_list(ctx)
        checked = check_url(url, allow)
        limits = FetchLimits(DEFAULT_TIMEOUT_S, MAX_BODY_BYTES, json_only=True)
        plan = _Plan(checked.url, allow, limits, max_results=args.max_results)
        preview = f"GET {checked.url}\nsearch for {args.query!r}; {_limits_text(plan.limits)}"
        return Prepared(preview, "execute", state=plan)

    async def execute(self, prepared: Prepared[_Plan], ctx: ToolContext) -> ToolOutput:
        plan = prepared.state
        got = await _get(plan)
        if isinstance(got, ToolOutput):
            return got
        if got.status >= 400:
            return ToolOutput(f"the search endpoint answered HTTP {got.status}", status="error", data={"url": got.url})
        try:
            results = parse_results(json.loads(got.text()))[: plan.max_results]
        except ValueError as exc:
            return ToolOutput(f"the search endpoint's answer is not usable: {exc}", status="error")
        lines = [untrusted_header(f"web search {plan.url}"), f"{len(results)} results"]
        for number, result in enumerate(results, 1):
            lines.append(f"{number}. {result['title']}\n   {result['url']}\n   {clip(result['snippet'], 300)[0]}")
        return ToolOutput("\n".join(lines), data={"url": plan.url, "results": results})


SCOUT_TOOLS: tuple[type[Tool[Any]], ...] = (FetchUrlTool, WebSearchTool)
