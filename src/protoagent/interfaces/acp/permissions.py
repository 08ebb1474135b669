"""Approvals as ``session/request_permission``: ACP's options mapped onto the three choices."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from acp import text_block, tool_content
from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    TerminalToolCallContent,
    ToolCallUpdate,
)

from protoagent.interfaces.acp.updates import UpdateTranslator, diff_content, tool_kind
from protoagent.tools.approvals import Answerer, ApprovalAnswer, ApprovalRequest

ALLOW_ONCE = "allow-once"
ALLOW_ALWAYS = "allow-always"
REJECT = "reject"

OPTIONS = (
    PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=ALLOW_ALWAYS, name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
)

Ask = Callable[[str, ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]
"""The client's ``request_permission(session_id, tool_call, options)``."""


def permission_tool_call(request: ApprovalRequest, translator: UpdateTranslator) -> ToolCallUpdate:
    """The tool call the editor shows with the question: its kind and the diff or command, under
    the id and absolute path its updates carry."""
    content: list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent]
    if request.effect == "write" and request.paths:
        content = [diff_content(translator.absolute(request.paths[0]), request.preview)]
    else:
        content = [tool_content(text_block(request.preview))]
    return ToolCallUpdate(
        tool_call_id=translator.tool_call_id(request.agent, request.call_id),
        title=f"{request.tool} wants to {request.effect}",
        kind=tool_kind(request.tool, "diff" if request.effect == "write" else "terminal"),
        status="pending",
        content=content,
    )


def answer_from_response(response: RequestPermissionResponse) -> ApprovalAnswer:
    """The editor's choice as an approval answer; a cancelled prompt or unknown option denies."""
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return ApprovalAnswer.deny("the editor cancelled the permission request")
    match outcome.option_id:
        case "allow-once":
            return ApprovalAnswer.once("allowed once in the editor")
        case "allow-always":
            return ApprovalAnswer.for_session("allowed for this session in the editor")
        case "reject":
            return ApprovalAnswer.deny("rejected in the editor")
        case other:
            return ApprovalAnswer.deny(f"the editor chose an unknown option {other!r}; denied")


def permission_answerer(
    session_id: str,
    ask: Ask,
    before: Callable[[], Awaitable[None]],
    translator: UpdateTranslator,
    denying: Callable[[], bool] = lambda: False,
) -> Answerer:
    """An answerer that asks the editor; ``before`` flushes pending updates so the tool call is
    shown before the question about it. Once ``denying()`` (the editor switched the session to
    ``deny`` while the prompt runs), it denies without asking: a switch narrows a running prompt
    at once, while a wider mode waits for the next prompt."""

    async def answer(request: ApprovalRequest) -> ApprovalAnswer:
        if denying():
            return ApprovalAnswer.deny("the editor switched this session to 'deny'")
        await before()
        response = await ask(session_id, permission_tool_call(request, translator), list(OPTIONS))
        return answer_from_response(response)

    return answer
