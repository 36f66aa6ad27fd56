"""Build the recall query text from what the agent or person is doing (docs/recall.md, "Pipeline", step 1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memories.normalize import clean_line

DEFAULT_LAST_TURNS = 8


@dataclass(frozen=True)
class RecallContext:
    """Everything a recall may look at. All parts optional; at least one must give text."""

    query: str = ""
    conversation: tuple[dict[str, Any], ...] = ()
    last_turns: int = DEFAULT_LAST_TURNS
    active_task: str = ""
    ui_state: dict[str, Any] = field(default_factory=dict)

    @property
    def ui_tags(self) -> list[str]:
        return [clean_line(t).lower() for t in self.ui_state.get("tag_filters", []) or [] if t]


def build_query_text(context: RecallContext) -> str:
    """The text to embed and to match: query, last turns, active task, route, file, selection.

    Newest turns come first after the explicit query, so when the model truncates long
    input it drops the oldest conversation, not what was just said.
    """
    parts: list[str] = []
    if context.query:
        parts.append(context.query)
    turns = list(context.conversation)[-context.last_turns:] if context.last_turns else []
    for turn in reversed(turns):
        content = clean_line(str(turn.get("content", "")))
        if content:
            parts.append(content)
    if context.active_task:
        parts.append(context.active_task)
    for key in ("route", "open_file", "selection_text"):
        value = context.ui_state.get(key)
        if value:
            parts.append(str(value))
    return clean_line(" \n ".join(parts))


def contextual_cue(context: RecallContext) -> str:
    """A short phrase naming the situation, for rationales ("the current X task")."""
    if context.active_task:
        task = clean_line(context.active_task)
        short = " ".join(task.split()[:8])
        return f"the current task “{short}{'…' if len(task.split()) > 8 else ''}”"
    if context.ui_state.get("open_file"):
        return f"the open file {context.ui_state['open_file']}"
    if context.ui_state.get("route"):
        return f"the current view {context.ui_state['route']}"
    if context.ui_tags:
        return f"the {', '.join(context.ui_tags[:3])} filter"
    if context.conversation:
        return "the current conversation"
    return "your query"
