"""What every MCP tool group shares: how a call finds its caller and calls the REST API as
them, the token budget of an answer, and the parameter types the tools have in common."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from django.conf import settings
from mcp.server.mcpserver import Context
from pydantic import Field

from governance.defuse import defuse_json
from retrieval.api.serializers import RecallInputSerializer
from samsite.mcp import budget
from samsite.mcp.dispatch import Answer, Caller, call
from samsite.mcp.errors import SamToolError, sam_error
from samsite.mcp.limits import rest_default, rest_limits

Space = Annotated[str, Field(description="Space slug, e.g. 'webshop'.", min_length=1, max_length=80)]
Spaces = Annotated[list[str] | None, Field(
    description="Space slugs to search; default: every space the token may read.",
    **rest_limits(RecallInputSerializer, "spaces"))]
Query = Annotated[str, Field(description="What you need to know, in plain words.",
                             **{**rest_limits(RecallInputSerializer, "query"), "min_length": 1})]
K = Annotated[int, Field(description="How many memories at most.", **rest_limits(RecallInputSerializer, "k"))]
RECALL_K = rest_default(RecallInputSerializer, "k")
BUDGET_RULE = ("Token budget of the whole answer: its text as you receive it, counted with SAM's "
               "tokenizer, never exceeded. The best items go in whole, then short, then the answer says "
               "`truncated: true` and `total`; a small budget still gets the best item, its headline cut "
               "with \"…\" (below about 70 tokens without its id).")
Budget = Annotated[int | None, Field(
    description=f"{BUDGET_RULE} Default: the server's (SAM_MCP_TOKEN_BUDGET, 4,000).",
    ge=budget.MIN_BUDGET, le=200_000)]
MemoryId = Annotated[str, Field(description="A memory id (mem_…).", min_length=1, max_length=64)]
ExecutionId = Annotated[str, Field(description="A PRD execution id (prd_…).", min_length=1, max_length=64)]
ChainId = Annotated[str, Field(description="A thinking chain id (chain_…).", min_length=1, max_length=64)]


def default_budget() -> int:
    return int(settings.SAM_MCP["TOKEN_BUDGET"])


def tool_error(code: str, status: int, message: str,
               fields: dict[str, list[str]] | None = None) -> SamToolError:
    """A tool error of the tool's own making, in SAM's error shape."""
    return sam_error(code, status, message, fields)


def _failed(answer: Answer) -> SamToolError:
    """SAM's answer to a failed REST call as a tool error: {"error": {code, status, message,
    fields, …}}, as the API answered it."""
    if isinstance(answer.body, dict) and isinstance(answer.body.get("error"), dict):
        body = answer.body
        body["error"].setdefault("fields", {})
        body["error"]["status"] = answer.status
        return SamToolError(body)
    return sam_error(f"http_{answer.status}", answer.status, "The request failed.")


class Tools:
    """The tools' access to SAM, bound to how a call's caller is found (headers over HTTP,
    the token the stdio server was started with otherwise)."""

    def __init__(self, default_caller: Caller | None) -> None:
        self.default_caller = default_caller

    def caller(self, ctx: Context | None) -> Caller:
        headers: Mapping[str, str] = {}
        try:
            headers = (ctx.headers if ctx is not None else None) or {}
        except ValueError:  # no request in flight (stdio has no headers)
            headers = {}
        authorization = headers.get("authorization", "")
        if authorization:
            return Caller(authorization=authorization, host=headers.get("host", ""),
                          secure=headers.get("x-sam-scheme") == "https",
                          request_id=headers.get("x-request-id", ""))
        if self.default_caller is None:
            raise tool_error("not_authenticated", 401, "Send an Authorization: Bearer token.")
        return self.default_caller

    def api(self, ctx: Context | None, method: str, path: str, *, defused: bool = True, **kwargs: Any) -> Any:
        """One REST call as the tool's caller; its JSON body, or a tool error in SAM's shape.

        The body goes to a model, so its strings are defused (governance.defuse) unless the
        tool asks for them as stored (`defused=False`) to defuse them itself item by item."""
        answer = call(self.caller(ctx), method, path, **kwargs)
        if not answer.ok:
            raise _failed(answer)
        return defuse_json(answer.body)[0] if defused else answer.body


def defused_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each item defused; one in which something was neutralised says what (`defused`)."""
    out = []
    for item in items:
        cleaned, kinds = defuse_json(item)
        out.append({**cleaned, "defused": kinds} if kinds else cleaned)
    return out
