"""Import a chat history into a space: read, split, extract, write through the memory services.

Everything a memory written by the API goes through, an imported one goes through too:
redaction before storage, sealing, memory modes, audit, the write checks (a repeated fact
reinforces, a changed one supersedes, an unsure one is reviewed). Each conversation is one
transaction with its watermark: nothing is half-written, and a re-import of an unchanged
conversation does nothing (docs/capture.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from django.db import connection, transaction

from core.actor import Actor
from core.errors import Forbidden, InvalidInput, ModeRefusesWrites
from core.models import Space
from governance import access, policy, privacy
from governance.audit.services import audit_record
from governance.crypto import keyed_digest
from governance.modes import WriteOutcome
from memories import services
from memories.capture import (
    SOURCES,
    chatgpt,
    claude_code,
    cursor,
    exchanges,
    extract,
    jsonl,
    learned,
    model_extractor,
    pipeline,
)
from memories.capture.conversation import Conversation, ItemError
from memories.capture.models import ImportedMemory
from memories.entities import graph
from memories.models import ImportedConversation, Memory

READERS: dict[str, ModuleType] = {m.SOURCE: m for m in (claude_code, chatgpt, cursor, jsonl)}
MEMORY_TYPES = {"solution": "procedural", "standard": "procedural", "gotcha": "procedural",
                "pattern": "procedural"}
# How strongly memories from one conversation are linked: enough for recall to follow.
CONVERSATION_LINK = 0.5


@dataclass
class ChatImportReport:
    source: str
    space: str
    conversations_seen: int = 0
    conversations_skipped: int = 0  # unchanged since the last import
    exchanges: int = 0  # read this time (new ones only, for a conversation that grew)
    candidates: int = 0
    memories_created: int = 0
    memories_reinforced: int = 0  # the space held the same text: that memory was reinforced
    memories_discarded: int = 0  # incognito: found, not kept
    rejected: list[dict[str, Any]] = field(default_factory=list)  # candidates the services refused
    errors: list[dict[str, str]] = field(default_factory=list)  # items the reader could not read
    model_candidates: int = 0  # what the model extractor proposed (SAM_EXTRACTOR_*), before merging
    model_failures: list[dict[str, Any]] = field(default_factory=list)
    dry_run: bool = False
    import_id: str = ""  # what the memories it created are recorded under (ImportedMemory)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# What became of a candidate (Outcome.status).
CREATED, REINFORCED, REJECTED = "created", "reinforced", "rejected"
DISCARDED = "discarded"  # incognito: found, not kept
FOUND = "found"  # a dry run: found, nothing written


@dataclass(frozen=True)
class Outcome:
    """What became of one candidate: the memory written or reinforced, or why not."""

    candidate: extract.Candidate
    status: str
    memory_id: str | None = None
    errors: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Captured:
    """One conversation's capture: what was read of it and what became of each candidate."""

    skipped: bool = False  # unchanged since it was last captured: nothing read
    start: int = 0  # the first exchange read (for a conversation that grew, its first new one)
    split: list[exchanges.Exchange] = field(default_factory=list)  # the whole conversation's exchanges
    outcomes: list[Outcome] = field(default_factory=list)


def _link_conversation(memories: list[Memory], *, source: str) -> None:
    """What one conversation taught is linked (seed 002's co-occurrence in a session): each
    memory RELATES_TO the next one it gave, so recall can follow from one to the other. The
    import is audited as a whole; its edges are not audited one by one."""
    graph.link_in_order([m.pk for m in memories], strength=CONVERSATION_LINK,
                        provenance={"by": "chat_import", "source": source})


def check_allowed(*, actor: Actor, space: Space, source: str) -> None:
    """Raise unless `actor` may import `source` histories into `space` now."""
    if source not in READERS:
        raise InvalidInput("Unknown source.", fields={"source": [f"One of {', '.join(SOURCES)}."]})
    if source not in (space.capture_sources or []):
        raise Forbidden(f"Space '{space.slug}' does not accept imports from {source}: its owner allows "
                        f"sources in the space's capture_sources setting.",
                        fields={"source": ["Not allowed in this space."]})
    if policy.write_outcome(actor, space) is WriteOutcome.REFUSE:
        raise ModeRefusesWrites(f"{policy.refusal_message(actor, space)} Nothing was imported.")


def chat_import(*, actor: Actor, space_slug: str, source: str, path: Path, dry_run: bool = False,
                progress: Callable[[ChatImportReport], None] | None = None,
                import_id: str = "") -> ChatImportReport:
    """Import the history at `path` (a file or a folder) into the space; report everything.
    The memories it creates are recorded under `import_id`, when given (selectors.import_progress)."""
    space = access.access_space(actor, slug=space_slug, action="write")
    check_allowed(actor=actor, space=space, source=source)
    report = ChatImportReport(source=source, space=space.slug, dry_run=dry_run, import_id=import_id)
    # Incognito: the import answers what it would keep and keeps nothing, not even watermarks.
    keep = not dry_run and policy.write_outcome(actor, space) is WriteOutcome.STORE
    for item in read(source, path):
        if isinstance(item, ItemError):
            # Named from the history's own root: a report never shows the server's paths.
            report.errors.append({**asdict(item), "origin": _relative(item.origin, path)})
        else:
            capture(actor=actor, space=space, conversation=item, report=report, dry_run=dry_run, keep=keep)
        if progress is not None:
            progress(report)
    audit_record("import", actor=actor, space=space,
                 after={"source": source, "conversations": report.conversations_seen,
                        "created": report.memories_created, "reinforced": report.memories_reinforced,
                        "errors": len(report.errors), "dry_run": dry_run},
                 note=f"chat history ({source})")
    return report


def _relative(origin: str, root: Path) -> str:
    try:
        return str(Path(origin).relative_to(root if root.is_dir() else root.parent))
    except ValueError:
        return Path(origin).name


def count(source: str, path: Path) -> int | None:
    """How many conversations `path` holds, where a reader can tell cheaply (else None)."""
    counter = getattr(READERS.get(source), "count", None)
    try:
        return counter(path) if counter is not None and path.exists() else None
    except Exception:  # a count is only for the progress bar: the import reports real errors
        return None


def read(source: str, path: Path) -> Iterator[Conversation | ItemError]:
    if not path.exists():
        yield ItemError(str(path), "path", "no such file or folder")
        return
    yield from READERS[source].read(path)


def _item(space: Space, conversation: Conversation, candidate: extract.Candidate,
          at: Any) -> dict[str, Any]:
    origin = Path(conversation.origin).name
    return {
        "space": space.slug,
        "title": candidate.title[:200],
        "content": candidate.content,
        "kind": candidate.kind,
        "memory_type": MEMORY_TYPES.get(candidate.kind, "semantic"),
        "priority": candidate.priority,
        "confidence_score": candidate.confidence,
        "tags": ["imported", conversation.source.replace("_", "-")],
        "source": {"type": "import", "uri": None,
                   "ref": f"{conversation.source}:{origin}#{conversation.key}:{candidate.exchange}"},
        "occurred_at": at.isoformat() if at else None,
        "metadata": {"capture": {"source": conversation.source, "conversation": conversation.key,
                                 "title": conversation.title[:200], "exchange": candidate.exchange,
                                 "rule": candidate.rule, "category": candidate.category,
                                 "evidence": candidate.evidence, "turn": candidate.turn}},
    }


def _redacted_text(space: Space, text: str) -> str:
    values = {"text": text}
    privacy.redact_fields(values, fields=["text"], allowlist=space.redaction_allowlist)
    return str(values["text"])


def _redacted(space: Space, split: list[exchanges.Exchange]) -> list[exchanges.Exchange]:
    return [exchanges.redacted(e, lambda text: _redacted_text(space, text)) for e in split]


# A placeholder redaction leaves ("[name]", "[email]").
_PLACEHOLDER = re.compile(r"\[[a-z_]+\]")
# What a memory of a whole sentence must keep after redaction to still say something.
MIN_WORDS_LEFT = 4


def _blanked(candidate: extract.Candidate, redacted: str) -> bool:
    """Whether redaction leaves the memory saying nothing: the fact it holds is gone (a rule's
    value), or, for a memory that is a user's sentence, too few words are left beside
    placeholders. (A fix or an accepted plan says more than the words redaction takes.)"""
    if candidate.value:
        return candidate.value not in redacted
    if redacted == candidate.content or not candidate.rule.startswith(learned.RULE_PREFIX):
        return False
    framing = len(candidate.content.split()) - len(candidate.evidence.split())  # "The user said:"
    return len(_PLACEHOLDER.sub(" ", redacted).split()) - framing < MIN_WORDS_LEFT


def _keepable(space: Space, conversation: Conversation, candidates: list[extract.Candidate],
              report: ChatImportReport) -> tuple[list[extract.Candidate], list[Outcome]]:
    """Leave out facts whose value redaction would remove, as the memory services would redact
    them: "The user's name is [name]." says nothing. Names, emails and phone numbers are
    personal data SAM does not store (docs/redaction.md)."""
    kept, rejected = [], []
    for candidate in candidates:
        probe = {"content": candidate.content}
        privacy.redact_fields(probe, fields=["content"], allowlist=space.redaction_allowlist)
        if _blanked(candidate, probe["content"]):
            errors = {"content": ["The fact is personal data that redaction removes before storage: "
                                  "nothing would be left to remember."]}
            report.rejected.append({"conversation": conversation.key, "exchange": candidate.exchange,
                                    "rule": candidate.rule, "errors": errors})
            rejected.append(Outcome(candidate, REJECTED, errors=errors))
            continue
        kept.append(candidate)
    return kept, rejected


def capture(*, actor: Actor, space: Space, conversation: Conversation, report: ChatImportReport,
            dry_run: bool = False, keep: bool | None = None) -> Captured:
    """Capture one conversation into `space`: read what is new since its watermark, extract,
    write through the memory services, move the watermark; all in one transaction.

    The caller has checked that `actor` may write to `space` (access and mode). `keep` is
    whether the mode keeps writes (False in incognito: what would be kept is counted, and
    nothing is written, not even the watermark); None asks the mode. Counts go to `report`;
    the answer says what became of each candidate, for callers that show it (the
    conversation API).
    """
    if keep is None:
        keep = not dry_run and policy.write_outcome(actor, space) is WriteOutcome.STORE
    report.conversations_seen += 1
    key = keyed_digest(space.pk, f"{conversation.source}:{conversation.key}")
    fingerprint = conversation.fingerprint()
    mark = ImportedConversation.objects.filter(space=space, source=conversation.source, key=key).first()
    if mark is not None and mark.fingerprint == fingerprint:
        report.conversations_skipped += 1
        return Captured(skipped=True)
    split = exchanges.split(conversation)
    # A conversation that grew since its last import: only its new exchanges are read.
    start = mark.exchanges if mark is not None and mark.exchanges <= len(split) else 0
    captured = Captured(start=start, split=split)
    report.exchanges += len(split) - start
    candidates = _candidates(space, conversation, split, start, report)
    report.candidates += len(candidates)
    candidates, captured.outcomes = _keepable(space, conversation, candidates, report)
    if dry_run:
        captured.outcomes += [Outcome(c, FOUND) for c in candidates]
        return captured
    if not keep:
        report.memories_discarded += len(candidates)
        captured.outcomes += [Outcome(c, DISCARDED) for c in candidates]
        return captured
    with transaction.atomic():
        # One capture of a conversation at a time: the hook, a watch and a client may send the
        # same one at once. Whoever comes second finds the watermark moved and writes nothing
        # (what it read, the first wrote).
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                           [f"capture:{space.pk}:{conversation.source}:{key}"])
        now = ImportedConversation.objects.filter(space=space, source=conversation.source, key=key).first()
        if _where(now) != _where(mark):
            report.conversations_skipped += 1
            return Captured(skipped=True)
        written = _write(actor, space, conversation, candidates, split, report) if candidates else []
        captured.outcomes += written
        created = sum(1 for o in written if o.status == CREATED)
        ImportedConversation.objects.update_or_create(
            space=space, source=conversation.source, key=key,
            defaults={"fingerprint": fingerprint, "exchanges": len(split),
                      "memories": (mark.memories if mark else 0) + created},
        )
    return captured


def _where(mark: ImportedConversation | None) -> tuple[int, str, int] | None:
    """How far a watermark says a conversation was read."""
    return (mark.pk, mark.fingerprint, mark.exchanges) if mark is not None else None


def _candidates(space: Space, conversation: Conversation, split: list[exchanges.Exchange], start: int,
                report: ChatImportReport) -> list[extract.Candidate]:
    """Every extractor's candidates of the exchanges from `start` on, merged (memories.capture.
    pipeline), the model's among them when one is configured (SAM_EXTRACTOR_*)."""
    proposed = None
    if model_extractor.enabled() and len(split) > start:
        # The model sees the conversation as SAM would store it: redacted.
        redacted, profile = _redacted(space, split), _redacted_text(space, conversation.profile)
        outcome = model_extractor.extract_with_model(redacted, profile=profile, start=start)
        if outcome.failed:
            # The other extractors' memories stand alone; the report says which conversations
            # lacked the model.
            report.model_failures.append({"conversation": conversation.key, "attempts": outcome.attempts,
                                          "reason": outcome.failed})
        report.model_candidates += len(outcome.candidates)
        proposed = outcome.candidates
    return pipeline.candidates(split, source=conversation.source, profile=conversation.profile, start=start,
                               model=proposed)


def _write(actor: Actor, space: Space, conversation: Conversation, candidates: list[extract.Candidate],
           split: list[exchanges.Exchange], report: ChatImportReport) -> list[Outcome]:
    """Write the candidates through the memory services (in the caller's transaction) and link
    the new memories in the order they came."""
    at = {e.index: e.at for e in split}
    result = services.memory_bulk_create(
        actor=actor, items=[_item(space, conversation, c, at.get(c.exchange)) for c in candidates])
    outcomes = []
    for candidate, row in zip(candidates, result.rows, strict=True):
        memory_id = row.memory.pk if row.memory is not None else None
        if row.errors:
            report.rejected.append({"conversation": conversation.key, "exchange": candidate.exchange,
                                    "rule": candidate.rule, "errors": row.errors})
            outcomes.append(Outcome(candidate, REJECTED, errors=row.errors))
        elif row.reinforced:
            report.memories_reinforced += 1
            outcomes.append(Outcome(candidate, REINFORCED, memory_id=memory_id))
        else:
            report.memories_created += 1
            outcomes.append(Outcome(candidate, CREATED, memory_id=memory_id))
    made = [row.memory for row in result.rows
            if row.memory is not None and not row.errors and not row.reinforced]
    _link_conversation(made, source=conversation.source)
    if report.import_id:
        ImportedMemory.objects.bulk_create([ImportedMemory(memory=m, import_id=report.import_id)
                                            for m in made])
    return outcomes
