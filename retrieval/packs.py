"""Context packs: one selection as JSON for machines and Markdown for prompts (docs/recall.md).

Order is lost-in-the-middle aware: models attend best to the start and the end of a long
context, so the strongest items go to the head and the tail and the weakest to the middle
(ranks 1, 3, 5, …, 6, 4, 2). A short critical-facts block comes first. Budgets count real
tokens (retrieval.tokens) of the whole Markdown, heading and budget line included, which
never exceeds the budget; whole items are trimmed, weakest first. When the matching memories
do not all fit, the summaries of their categories come first (an overview, at most 30% of
the budget), so a tight pack still covers the ground of the items it had to drop. Nothing in
a pack depends on the wall clock but its `generated_at`, the time the pack was made: the
request's `as_of` when it names one (the time the pack is made "as of"), else the time of the
request; so the same store and inputs, `as_of` among them, give byte-identical packs.

Stored text is defused before it is measured or shown (governance.defuse): each item's JSON
says what was neutralised in it (`defused`), session entries and overview lines the same,
and the Markdown carries a one-line legend when anything shown was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Set
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from core.text import title_with_gist
from governance.defuse import LEGEND, defuse, defuse_json
from retrieval import presenters
from retrieval.pipeline import RankedItem, RecallResult
from retrieval.tokens import count_tokens

CONTENT_CHARS = 700
CRITICAL_FACTS = 3
# Card statuses a pack leaves out unless asked for them (docs/sessions.md, "Memory cards").
UNVALIDATED = frozenset({"failed", "stale"})
# The session sections (active tasks, decisions, changed files, the sessions' open questions)
# each take at most this share of the budget, so one noisy source cannot crowd out the rest
# and the matching memories keep at least 40% of it.
SECTION_SHARE = 0.15
# When the matching memories do not all fit, the summaries of their categories come first
# (seed 003's tiers: summaries, then items): at most this share of the budget, and the first
# lines (the strongest memories) of each summary.
OVERVIEW_SHARE = 0.3
OVERVIEW_LINES = 3


@dataclass
class PackContext:
    """What the apps above recall add to a pack: the validation status of recalled memories
    that are cards ({memory id: {card, card_type, status}}) and the session sections. Each
    entry of a section is {"markdown": one line, ...its JSON fields}."""

    cards: dict[str, dict[str, Any]] = field(default_factory=dict)
    active_tasks: list[dict[str, Any]] = field(default_factory=list)
    recent_decisions: list[dict[str, Any]] = field(default_factory=list)
    changed_files: list[dict[str, Any]] = field(default_factory=list)
    open_questions: list[dict[str, Any]] = field(default_factory=list)


# (actor, spaces, memory ids, as_of) -> PackContext. The prd app registers one at start
# (sessions and cards live above recall, which never imports them).
PackContextProvider = Callable[[Any, list[str], list[str], datetime | None], PackContext]
_context_providers: list[PackContextProvider] = []


def register_pack_context(provider: PackContextProvider) -> None:
    if provider not in _context_providers:
        _context_providers.append(provider)


def pack_context(actor: Any, spaces: list[str], memory_ids: list[str], as_of: datetime | None) -> PackContext:
    merged = PackContext()
    for provider in _context_providers:
        part = provider(actor, spaces, memory_ids, as_of)
        merged.cards.update(part.cards)
        for name in SESSION_SECTIONS:
            getattr(merged, name).extend(getattr(part, name))
        merged.open_questions.extend(part.open_questions)
    return merged


def lost_in_the_middle_order(items: list[RankedItem]) -> list[RankedItem]:
    """[1, 2, 3, 4, 5, 6] -> [1, 3, 5, 6, 4, 2]: strongest at both ends."""
    head = items[0::2]
    tail = items[1::2]
    return head + tail[::-1]


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _content(item: RankedItem) -> str:
    content = item.row["content"]
    return content if len(content) <= CONTENT_CHARS else content[: CONTENT_CHARS - 1].rstrip() + "…"


def _item_markdown(number: int, item: RankedItem) -> str:
    row = item.row
    source = " ".join(str(x) for x in (row["source_type"], row["source_ref"], row["source_uri"]) if x)
    return (
        f"### {number}. {row['title']}\n"
        f"*{row['kind']} · {row['memory_type']} · space {row['space_slug']} · v{row['version']} · "
        f"score {item.score:.3f}*\n\n"
        f"{_content(item)}\n\n"
        f"> Why: {item.rationale}\n\n"
        f"Source: {source} · `{row['id']}`\n"
    )


def _fact_markdown(item: RankedItem) -> str:
    title, summary = item.row["title"].strip(), (item.row["summary"] or "").strip()
    line = title_with_gist(title, summary)
    # The title in bold when it is shown; a summary that starts with it stands alone.
    if line == title:
        shown = f"**{title}**"
    elif line == f"{title}: {summary}":
        shown = f"**{title}**: {summary}"
    else:
        shown = line
    return f"- {shown} (`{item.id}`)\n"


@dataclass
class ContextPack:
    json: dict[str, Any]
    markdown: str


# How much of the frame (title, summary and budget line) the Markdown keeps: a budget too
# small for the whole frame drops the query from the summary, then the summary itself.
FRAMES = ("full", "short", "title")
SECTION_HEADINGS = {"critical": "## Critical facts\n", "overview": "## Overview by category\n",
                    "items": "## Memories\n",
                    "questions": "## Open questions\n", "active_tasks": "## Active tasks\n",
                    "recent_decisions": "## Recent decisions\n", "changed_files": "## Changed files\n"}
SESSION_SECTIONS = ("active_tasks", "recent_decisions", "changed_files")
# Rounds of re-rendering until the budget line states the count of the text it is in.
USED_ROUNDS = 4
# The fields of a recalled memory a pack shows.
SHOWN_FIELDS = ("title", "summary", "content", "source_ref", "source_uri")


def _defused_item(item: RankedItem) -> tuple[RankedItem, list[str]]:
    """`item` with the stored text a pack shows defused, and what was neutralised."""
    row, found = dict(item.row), set()
    for name in SHOWN_FIELDS:
        if isinstance(row.get(name), str):
            row[name], kinds = defuse(row[name])
            found.update(kinds)
    rationale, kinds = defuse(item.rationale)
    found.update(kinds)
    return replace(item, row=row, rationale=rationale), sorted(found)


def _defused_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A session entry, overview summary or open question with its strings defused; one
    with something neutralised says what under `defused`."""
    cleaned, kinds = defuse_json(entry)
    return {**cleaned, "defused": kinds} if kinds else cleaned


def _defused_result(result: RecallResult) -> tuple[RecallResult, dict[str, list[str]]]:
    items, found = [], {}
    for item in result.items:
        cleaned, kinds = _defused_item(item)
        items.append(cleaned)
        if kinds:
            found[item.id] = kinds
    summaries = [_defused_entry(c) for c in result.category_summaries]
    follow_ups = [_defused_entry(q) for q in result.follow_ups]
    return replace(result, items=items, category_summaries=summaries, follow_ups=follow_ups), found


def _defused_context(context: PackContext) -> PackContext:
    return PackContext(cards=context.cards,
                       **{name: [_defused_entry(e) for e in getattr(context, name)]
                          for name in (*SESSION_SECTIONS, "open_questions")})


@dataclass
class _Selection:
    """What one pack shows: the frame level, then critical facts, items (best first) and
    open questions, each kept only while the whole Markdown fits the budget."""

    frame: str
    critical: list[RankedItem]
    kept: list[RankedItem]
    questions: list[dict[str, Any]]
    sections: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    overview: list[dict[str, Any]] = field(default_factory=list)
    # Ids of recalled memories whose text was defused.
    defused: frozenset[str] = frozenset()

    def shows_defused(self) -> bool:
        """True when any part shown had something neutralised (the legend then goes in)."""
        if any(i.id in self.defused for i in self.kept + self.critical):
            return True
        entries = [*self.questions, *self.overview, *(e for part in self.sections.values() for e in part)]
        return any(e.get("defused") for e in entries)


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _summary(selection: _Selection, query_text: str, pack_type: str) -> str:
    """What the pack shows: the memories it shows (critical facts and items, each counted
    once), the categories of its overview, and what for."""
    shown = {i.id: i for i in selection.critical + selection.kept}
    spaces = sorted({i.row["space_slug"] for i in shown.values()} | {e["space"] for e in selection.overview})
    what = _plural(len(shown), "memory", "memories")
    if selection.overview:
        what += f" and an overview of {_plural(len(selection.overview), 'category', 'categories')}"
    subject = query_text[:200].strip() or pack_type + " context"
    # A question keeps its own mark ("…the webshop?"), not "?." after it.
    end = "" if subject.endswith((".", "?", "!")) else "."
    return f"{what} from {', '.join(spaces) or 'no space'} for: {subject}{end}"


def _question_markdown(question: dict[str, Any]) -> str:
    if "markdown" in question:  # a session's open question
        return str(question["markdown"])
    return f"- {question['label']} ({', '.join(question['payload']['memory_ids'])})"


def _section_markdown(entry: dict[str, Any]) -> str:
    return str(entry["markdown"])


def _overview_entry(summary: dict[str, Any], left_out: Set[str]) -> dict[str, Any] | None:
    """A category summary (RecallResult.category_summaries) without the lines of memories the
    pack shows whole or leaves out (cards that failed their checks), cut to its strongest
    lines; None when nothing is left."""
    lines = [line for line in summary["lines"] if line["id"] not in left_out][:OVERVIEW_LINES]
    if not lines:
        return None
    text = "\n".join(line["line"] for line in lines)
    return {"space": summary["space"], "name": summary["name"], "display_name": summary["display_name"],
            "summary": text, "memory_ids": [line["id"] for line in lines], "items": summary["items"],
            "lines": lines, "markdown": f"**{summary['display_name']}** ({summary['space']})\n{text}\n",
            **({"defused": summary["defused"]} if summary.get("defused") else {})}


def _generated_at(as_of: datetime | None) -> str:
    """When the pack is made: `as_of` when the request names one, else now (to the second)."""
    return _iso(as_of if as_of is not None else datetime.now(UTC).replace(microsecond=0))


def render_markdown(selection: _Selection, *, pack_type: str, summary: str, generated_at: str | None,
                    used: int, target: int, trimmed: int) -> str:
    """The Markdown of a selection, stating `used` of `target` tokens in its budget line."""
    lines = [f"# Context pack ({pack_type})\n"]
    if selection.frame != "title":
        shown = summary if selection.frame == "full" else summary.split(" for: ")[0] + "."
        lines.append(f"*{shown}*  \n"
                     f"*generated {generated_at or 'n/a'} · {used}/{target} tokens · {trimmed} trimmed*\n")
    if selection.shows_defused():
        lines.append(LEGEND + "\n")
    if selection.critical:
        lines.append(SECTION_HEADINGS["critical"])
        lines.extend(_fact_markdown(i) for i in selection.critical)
        lines.append("")
    if selection.overview:
        lines.append(SECTION_HEADINGS["overview"])
        lines.extend(_section_markdown(e) for e in selection.overview)
        lines.append("")
    for name in ("active_tasks", "recent_decisions"):
        if selection.sections.get(name):
            lines.append(SECTION_HEADINGS[name])
            lines.extend(_section_markdown(e) for e in selection.sections[name])
            lines.append("")
    if selection.kept:
        lines.append(SECTION_HEADINGS["items"])
        ordered = lost_in_the_middle_order(selection.kept)
        lines.extend(_item_markdown(number, item) for number, item in enumerate(ordered, start=1))
    if selection.sections.get("changed_files"):
        lines.append(SECTION_HEADINGS["changed_files"])
        lines.extend(_section_markdown(e) for e in selection.sections["changed_files"])
        lines.append("")
    if selection.questions:
        lines.append(SECTION_HEADINGS["questions"])
        lines.extend(_question_markdown(q) for q in selection.questions)
    return "\n".join(lines).rstrip() + "\n"


def _render_counted(selection: _Selection, *, result: RecallResult, pack_type: str, target: int,
                    generated_at: str) -> tuple[str, int]:
    """(markdown, used): `used` is the token count of the whole Markdown, which states it.

    The count is part of the text it counts, so render until the stated number is the
    count. Should the number's own token length flip between two values, state the larger:
    `used` is then an upper bound, never an understatement.
    """
    fixed: dict[str, Any] = {"pack_type": pack_type, "target": target,
                             "summary": _summary(selection, result.query_text, pack_type),
                             "generated_at": generated_at,
                             "trimmed": len(result.items) - len(selection.kept)}
    used, seen = 0, 0
    for _ in range(USED_ROUNDS):
        markdown = render_markdown(selection, used=used, **fixed)
        counted = count_tokens(markdown)
        if counted == used:
            return markdown, used
        seen = max(seen, counted)
        used = counted
    markdown = render_markdown(selection, used=seen, **fixed)
    return markdown, max(seen, count_tokens(markdown))


class _Packer:
    """Fills one pack's selection part by part, each part only while the running token
    count (`used`) stays within the budget.

    Costs of the parts add up (WordPiece splits on the newlines that join them), so a greedy
    pass picks the parts; `fit` then counts the whole text and drops parts, least important
    first, until it fits.
    """

    def __init__(self, result: RecallResult, *, pack_type: str, token_budget: int, as_of: datetime | None,
                 context: PackContext, excluded: frozenset[str],
                 defused: frozenset[str] = frozenset()) -> None:
        self.result, self.pack_type, self.budget, self.as_of = result, pack_type, token_budget, as_of
        # Once per pack: every rendering while it is packed states the same time.
        self.generated_at = _generated_at(as_of)
        self.context, self.excluded, self.defused = context, excluded, defused
        self.selection = _Selection("title", [], [], [], defused=defused)
        self.used = 0

    def counted(self, selection: _Selection) -> tuple[str, int]:
        return _render_counted(selection, result=self.result, pack_type=self.pack_type, target=self.budget,
                               generated_at=self.generated_at)

    def start(self) -> bool:
        """Choose the fullest frame that fits; False when not even the title does."""
        for frame in FRAMES:
            used = self.counted(_Selection(frame, [], [], []))[1]
            if used <= self.budget:
                self.selection, self.used = _Selection(frame, [], [], [], defused=self.defused), used
                return True
        return False

    def admit(self, part: list, value: Any, cost: int, section: str) -> None:
        heading = 0 if part else count_tokens(SECTION_HEADINGS[section])
        if self.used + heading + cost <= self.budget:
            part.append(value)
            self.used += heading + cost

    def admit_capped(self, part: list, entries: list[dict[str, Any]], section: str,
                     render: Callable[..., str], share_of_budget: float = SECTION_SHARE) -> None:
        """Entries of a session section, each section within its share of the budget."""
        share, spent = int(self.budget * share_of_budget), 0
        for entry in entries:
            cost = count_tokens(render(entry))
            if spent + cost > share:
                break
            before = len(part)
            self.admit(part, entry, cost, section)
            spent += cost if len(part) > before else 0

    def admit_critical(self, critical: list[RankedItem]) -> None:
        for item in critical:
            self.admit(self.selection.critical, item, count_tokens(_fact_markdown(item)), "critical")

    def admit_sessions(self) -> None:
        """The session sections, then the sessions' open questions."""
        for name in SESSION_SECTIONS:
            self.admit_capped(self.selection.sections.setdefault(name, []), getattr(self.context, name), name,
                              _section_markdown)
        self.admit_capped(self.selection.questions, self.context.open_questions, "questions",
                          _question_markdown)

    def admit_items(self) -> None:
        # Best first, so trimming starts with the weakest; an item too large for what is
        # left is skipped, and a smaller, weaker one may still fit after it.
        items = self.result.items
        costs = [count_tokens(_item_markdown(len(items), item)) for item in items]
        tight = self.used + sum(costs) > self.budget
        for index, (item, cost) in enumerate(zip(items, costs, strict=True)):
            self.admit(self.selection.kept, item, cost, "items")
            if index == 0 and tight and self.result.category_summaries:
                # Too tight for every match: after the best one, the broad picture, in a
                # bounded share, before the rest.
                entries = [_overview_entry(c, self._left_out()) for c in self.result.category_summaries]
                self.admit_capped(self.selection.overview, [e for e in entries if e], "overview",
                                  _section_markdown, OVERVIEW_SHARE)

    def admit_conflicts(self) -> None:
        for question in self.result.follow_ups:
            if question["type"] == "clarify_conflict":
                self.admit(self.selection.questions, question, count_tokens(_question_markdown(question)),
                           "questions")

    def trim_overview(self) -> None:
        """Items admitted after the overview: their lines go (shorter, so still within budget)."""
        if self.selection.overview:
            entries = [_overview_entry(e, self._left_out()) for e in self.selection.overview]
            self.selection.overview = [e for e in entries if e]

    def _left_out(self) -> frozenset[str]:
        """Memories an overview line must not repeat: those shown whole, and excluded cards."""
        return self.excluded | {i.id for i in self.selection.kept + self.selection.critical}

    def fit(self) -> tuple[str, int]:
        """The Markdown and its count, dropping parts until the whole text fits."""
        selection = self.selection
        markdown, used = self.counted(selection)
        while used > self.budget:
            # The frame's numbers and dates can cost a token more than estimated: drop the
            # least important part left and count again.
            sections = selection.sections
            droppable: list[list[Any]] = [
                selection.questions, sections.get("changed_files", []), selection.overview, selection.kept,
                sections.get("recent_decisions", []), sections.get("active_tasks", []), selection.critical]
            for part in droppable:
                if part:
                    part.pop()
                    break
            markdown, used = self.counted(selection)
        return markdown, used


def _select(result: RecallResult, critical: list[RankedItem], *, pack_type: str, token_budget: int,
            as_of: datetime | None, context: PackContext | None = None,
            excluded: frozenset[str] = frozenset(), defused: frozenset[str] = frozenset()
            ) -> tuple[_Selection, str, int, str]:
    """Choose what fits: returns (selection, markdown, used, generated_at) with used <= token_budget."""
    packer = _Packer(result, pack_type=pack_type, token_budget=token_budget, as_of=as_of,
                     context=context or PackContext(), excluded=excluded, defused=defused)
    if not packer.start():
        # Not even the title fits: an empty pack is the only one within the budget.
        return _Selection("title", [], [], []), "", 0, packer.generated_at
    packer.admit_critical(critical)
    if pack_type == "boot":
        # Read at session start: what is in flight comes before what matches.
        packer.admit_sessions()
        packer.admit_items()
        packer.admit_conflicts()
    else:
        packer.admit_items()
        packer.admit_conflicts()
        packer.admit_sessions()
    packer.trim_overview()
    markdown, used = packer.fit()
    return packer.selection, markdown, used, packer.generated_at


def _public(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "markdown"}


def _validation(result: RecallResult, context: PackContext, include_unvalidated: bool
                ) -> tuple[list[RankedItem], dict[str, Any]]:
    """The recalled items a pack may use, and the report of the cards among them."""
    report: dict[str, Any] = {"checked": 0, "passed": 0, "unchecked": 0, "failed": [], "stale": [],
                              "excluded": [], "include_unvalidated": include_unvalidated}
    allowed = []
    for item in result.items:
        card = context.cards.get(item.id)
        if card is None:
            allowed.append(item)
            continue
        report["checked"] += 1
        status = card["status"]
        if status in UNVALIDATED:
            report[status].append(item.id)
            if not include_unvalidated:
                report["excluded"].append(item.id)
                continue
        else:
            report["passed" if status == "pass" else "unchecked"] += 1
        allowed.append(item)
    return allowed, report


def build_pack(result: RecallResult, *, pack_type: str, token_budget: int,
               as_of: datetime | None = None, actor: Any = None,
               include_unvalidated: bool = False) -> ContextPack:
    """Both renderings of one selection. The whole Markdown, frame, critical facts, session
    sections, items and open questions, counts against `token_budget` and never exceeds it.

    With an `actor`, the registered pack contexts add the session sections and the cards'
    validation: a card that failed its checks or went stale is left out unless
    `include_unvalidated` (the pack's `validation_report` names it either way).
    """
    result, defused = _defused_result(result)
    # The overview's memories too: a card among them that failed its checks stays out.
    overview_ids = [line["id"] for c in result.category_summaries for line in c["lines"]]
    context = _defused_context(
        pack_context(actor, list(result.spaces), [i.id for i in result.items] + overview_ids, as_of)
        if actor is not None else PackContext())
    allowed, validation_report = _validation(result, context, include_unvalidated)
    excluded = frozenset() if include_unvalidated else frozenset(
        memory_id for memory_id, card in context.cards.items() if card["status"] in UNVALIDATED)
    result = replace(result, items=allowed)
    allowed_ids = {item.id for item in allowed}
    ranked = list(result.items)
    candidates = sorted(
        ranked, key=lambda i: ({"core": 0, "high": 1}.get(i.row["priority"], 2), -i.score, i.id)
    )[:CRITICAL_FACTS]
    selection, markdown, used, generated_at = _select(result, candidates, pack_type=pack_type,
                                        token_budget=token_budget, as_of=as_of, context=context,
                                        excluded=excluded, defused=frozenset(defused))
    kept, critical = selection.kept, selection.critical
    ordered = lost_in_the_middle_order(kept)

    items_json = [
        presenters.pack_item(item, position=position, rank=kept.index(item) + 1, content=_content(item),
                             tokens=count_tokens(_item_markdown(position, item)),
                             card=context.cards.get(item.id), defused=defused.get(item.id, []))
        for position, item in enumerate(ordered, start=1)
    ]
    pack = {
        "query": result.query_text,
        "generated_at": generated_at,
        "pack_type": pack_type,
        "summary": _summary(selection, result.query_text, pack_type),
        "critical_facts": [{**presenters.critical_fact(i), "defused": defused.get(i.id, [])}
                           for i in critical],
        "overview": [{**{k: v for k, v in _public(e).items() if k != "lines"},
                      "items": [i for i in e["items"] if i in allowed_ids]} for e in selection.overview],
        "items": items_json,
        "active_tasks": [_public(e) for e in selection.sections.get("active_tasks", [])],
        "recent_decisions": [_public(e) for e in selection.sections.get("recent_decisions", [])],
        "changed_files": [_public(e) for e in selection.sections.get("changed_files", [])],
        "open_questions": [_public(q) for q in selection.questions],
        "validation_report": validation_report,
        # used: tokens of the whole Markdown, which is what the budget bounds.
        "token_budget": {"target": token_budget, "used": used, "trimmed": len(ranked) - len(kept),
                         "tokenizer": "all-MiniLM-L6-v2 WordPiece"},
        "source_mix": _source_mix(kept, selection),
        "inclusion_reason": [{"id": i.id, "reason": i.rationale} for i in kept],
        "profile": result.profile.name,
        "defused": selection.shows_defused(),
    }
    return ContextPack(json=pack, markdown=markdown)


def _source_mix(kept: list[RankedItem], selection: _Selection) -> dict[str, int]:
    """Counts by where what the pack shows came from: memories by their source type, session
    entries by theirs (files, agent, prd, ...)."""
    mix = Counter(i.row["source_type"] for i in kept)
    for entries in selection.sections.values():
        mix.update(str(e.get("source", "session")) for e in entries)
    return dict(sorted(mix.items()))
