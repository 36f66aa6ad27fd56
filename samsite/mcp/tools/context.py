"""Tools that put memories into a prompt: the block about a user (`augment_prompt`) and a
context pack for a task or a session's start (`context_pack`)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from retrieval.api.serializers import ContextPackInputSerializer, PromptAugmentationInputSerializer
from samsite.mcp import budget, prompt_block
from samsite.mcp.limits import one_of, rest_default, rest_limits
from samsite.mcp.toolkit import Space, Spaces, Tools, default_budget

PACK, AUGMENT = ContextPackInputSerializer, PromptAugmentationInputSerializer
# Tokens the answer's fields other than the Markdown take, about (checked after: never over).
PACK_ENVELOPE_TOKENS = 60
# Below this many tokens for the Markdown, a pack shows its frame and hardly an item: compact.
COMPACT_BELOW = 200
# Characters of the prompt block and answer that are not notes (delimiters, preamble, headings).
AUGMENT_FRAME_CHARS = 400
# The notes stay between their delimiters, whatever the budget (they mark them as quoted
# data), and those alone take about 30 tokens: the smallest budget with room for a note.
AUGMENT_MIN_BUDGET = 45


def register(server: MCPServer, tools: Tools) -> None:
    @server.tool(description="For a chat app: the block to put in the system prompt about this user "
                             "(core facts, then by priority and relevance to the message, grouped by "
                             "category, the user's preferred style first). Notes are quoted data. "
                             "`token_budget` is the whole answer's (its text as you receive it, counted with "
                             "SAM's tokenizer), never exceeded: notes that do not fit are left out "
                             "(`left_out`), and a small budget still gets the first note, cut with \"…\". "
                             "`max_chars` (deprecated) also caps the characters of notes, as REST's does.")
    def augment_prompt(space: Space, message: Annotated[str, Field(
            description="The user's current message.", **rest_limits(AUGMENT, "message"))] = "",
            max_items: Annotated[int, Field(description="Notes at most.", **rest_limits(AUGMENT, "max_items"))
                                 ] = rest_default(AUGMENT, "max_items"),
            token_budget: Annotated[int | None, Field(
                description="Tokens of the whole answer (default: the server's, SAM_MCP_TOKEN_BUDGET). At "
                            f"least {AUGMENT_MIN_BUDGET}: the block's quoting delimiters take about 30.",
                ge=AUGMENT_MIN_BUDGET, le=200_000)] = None,
            max_chars: Annotated[int | None, Field(
                description="Deprecated: use token_budget. Characters of notes at most.",
                **rest_limits(AUGMENT, "max_chars"))] = None,
            track: Annotated[bool, Field(description="Count the notes put in as used (default), so "
                                                     "they do not decay as if unused.")] = True,
            ctx: Context | None = None) -> dict[str, Any]:
        tokens = token_budget or default_budget()
        limits = rest_limits(AUGMENT, "max_chars")
        # Characters of notes the budget allows, estimated low (prose runs about four characters
        # a token); what comes back is checked against the budget and trimmed if still over.
        chars = min(max(tokens * 3 - AUGMENT_FRAME_CHARS, limits["ge"]), limits["le"])
        # Each note of the block is defused already; defusing the block again would quote
        # its own <sam_user_memory> delimiters.
        answer = tools.api(ctx, "POST", "/api/v1/prompt-augmentation/", defused=False, body={
            "space": space, "message": message, "max_items": max_items,
            "max_chars": min(chars, max_chars) if max_chars else chars, "track": track})
        return prompt_block.fit({"block": answer["block"], "notes": len(answer["notes"]),
                                 "left_out": answer["left_out"], "silenced": answer["silenced"],
                                 "tracked": answer["tracked"]}, limit=tokens)

    @server.tool(description="A context pack: the memories for a task (or for starting a session, "
                             "pack_type=boot) as Markdown ready for a prompt. `token_budget` is the whole "
                             "answer's (its text as you receive it, counted with SAM's tokenizer), never "
                             "exceeded; when the pack does not fit, its items come one line each "
                             "(`compact: true`), the best first, and a small budget still gets the best "
                             "item's title cut with \"…\".")
    def context_pack(query: Annotated[str, Field(description="The task or question.",
                                                 **rest_limits(PACK, "query"))] = "",
                     spaces: Spaces = None,
                     pack_type: Annotated[str, one_of(PACK, "pack_type")] = rest_default(PACK, "pack_type"),
                     token_budget: Annotated[int, Field(
                         description="Tokens of the whole answer (default as REST's context pack).",
                         ge=budget.MIN_BUDGET, le=rest_limits(PACK, "token_budget")["le"])
                     ] = rest_default(PACK, "token_budget"),
                     include_unvalidated: Annotated[bool, Field(
                         description="Also show memory cards whose checks failed or that went stale."
                     )] = rest_default(PACK, "include_unvalidated"),
                     ctx: Context | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, "pack_type": pack_type,
                                "include_unvalidated": include_unvalidated}
        if spaces:
            body["spaces"] = spaces
        floor = rest_limits(PACK, "token_budget")["ge"]  # REST's smallest pack budget

        def pack_within(markdown_budget: int) -> tuple[dict[str, Any], dict[str, Any]]:
            # Defused as it is built.
            pack = tools.api(ctx, "POST", "/api/v1/context-packs/", defused=False,
                             body={**body, "token_budget": max(floor, markdown_budget)})
            report = pack["json"].get("validation_report", {})
            envelope = {"items": len(pack["json"].get("items", [])), "token_budget": token_budget,
                        "left_out": {"failed": len(report.get("failed", [])),
                                     "stale": len(report.get("stale", [])),
                                     "excluded": report.get("excluded", [])}}
            return pack, envelope

        if token_budget - PACK_ENVELOPE_TOKENS < COMPACT_BELOW:
            # Too small for a pack's frame and an item: its items one line each, from a pack
            # of the usual size.
            pack, envelope = pack_within(rest_default(PACK, "token_budget"))
        else:
            # REST's budget counts the Markdown alone: ask for what is left beside the envelope,
            # and once more, smaller by what went over, if the JSON text came out longer.
            pack, envelope = pack_within(token_budget - PACK_ENVELOPE_TOKENS)
            whole = {"markdown": pack["markdown"], **envelope, "compact": False, "truncated": False}
            over = budget.tokens_of(whole) - token_budget
            if over > 0 and token_budget - PACK_ENVELOPE_TOKENS - 2 * over >= COMPACT_BELOW:
                pack, envelope = pack_within(token_budget - PACK_ENVELOPE_TOKENS - 2 * over)
                whole = {"markdown": pack["markdown"], **envelope, "compact": False, "truncated": False}
            if budget.tokens_of(whole) <= token_budget:
                return whole
        lines = "\n".join(_item_line(item) for item in pack["json"].get("items", []))
        compact = budget.fit_text({**envelope, "compact": True}, "markdown", lines, budget=token_budget)
        return compact


def _item_line(item: dict[str, Any]) -> str:
    """One line of a pack item, for a budget the pack's Markdown does not fit."""
    summary = item.get("summary") or ""
    return f"- {item.get('title', '')}" + (f": {summary}" if summary else "") + f" ({item.get('id', '')})"
