"""Typed request and response models of SAM's REST API (the subset this client calls).

Answers are parsed leniently (`extra="allow"`): a field SAM adds later is kept on the model
(`model.model_extra`) rather than breaking an older client. Requests are strict
(`extra="forbid"`): a misspelt field fails here, before it reaches the server.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")


class Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def body(self) -> dict[str, Any]:
        """The JSON body: only the fields set, so the server's defaults apply to the rest."""
        return self.model_dump(mode="json", exclude_none=True)


# --- lists ---------------------------------------------------------------------------------

class Page(Answer, Generic[T]):
    """One page of a list: SAM's envelope `{count, next, previous, results}`."""

    count: int
    next: str | None = None
    previous: str | None = None
    results: list[T]


# --- memories --------------------------------------------------------------------------------

class MemoryCreate(Request):
    """A memory to store (`POST /api/v1/memories/`); SAM suggests summary, phrases and tags."""

    space: str
    title: str
    content: str
    id: str | None = None
    summary: str | None = None
    kind: str | None = None
    memory_type: str | None = None
    tags: list[str] | None = None
    canonical_phrases: list[str] | None = None
    priority: str | None = None
    reliability: str | None = None
    importance: float | None = None
    occurred_at: datetime | None = None
    metadata: dict[str, Any] | None = None


class MemoryEdit(Request):
    """An edit (`PATCH /api/v1/memories/{id}/`): `version` names the version edited."""

    version: int
    title: str | None = None
    content: str | None = None
    summary: str | None = None
    kind: str | None = None
    tags: list[str] | None = None
    canonical_phrases: list[str] | None = None
    priority: str | None = None
    reliability: str | None = None
    importance: float | None = None
    metadata: dict[str, Any] | None = None
    reason: str | None = None


class Memory(Answer):
    id: str
    space: str
    title: str
    content: str
    summary: str = ""
    kind: str = ""
    memory_type: str = ""
    tags: list[str] = Field(default_factory=list)
    canonical_phrases: list[str] = Field(default_factory=list)
    priority: str = ""
    reliability: str = ""
    version: int = 1
    archive_flag: bool = False
    embedding_status: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None


class MemoryWrite(Answer):
    """A create's or an edit's answer. `replayed` is true when SAM replayed the answer of an
    earlier request with the same Idempotency-Key (nothing was written this time)."""

    memory: Memory | None = None
    changelog_diff: list[dict[str, Any]] = Field(default_factory=list)
    suggested_fields: list[str] = Field(default_factory=list)
    redaction_report: list[dict[str, Any]] = Field(default_factory=list)
    persisted: bool = True
    reinforced: bool = False
    replayed: bool = False


class BulkRow(Answer):
    index: int
    ok: bool
    id: str | None = None
    persisted: bool | None = None
    reinforced: bool | None = None
    errors: dict[str, list[str]] = Field(default_factory=dict)


class BulkResult(Answer):
    created: int
    reinforced: int = 0
    failed: int = 0
    atomic: bool = False
    results: list[BulkRow] = Field(default_factory=list)
    replayed: bool = False


# --- recall and context packs ------------------------------------------------------------------

class Recall(Request):
    """`POST /api/v1/recall/`: what to recall for, and where."""

    query: str = ""
    active_task: str | None = None
    spaces: list[str] | None = None
    k: int | None = None
    query_type: str | None = None
    filters: dict[str, Any] | None = None
    token_budget: int | None = None
    track: bool | None = None


class RankedMemory(Answer):
    id: str
    space: str
    title: str
    summary: str = ""
    kind: str = ""
    memory_type: str = ""
    score: float
    rationale: str = ""
    highlights: list[str] = Field(default_factory=list)
    conflict: dict[str, Any] | None = None
    version: int = 1


class RecallData(Answer):
    ranked_memory_list: list[RankedMemory]
    query_text: str = ""
    spaces: list[str] = Field(default_factory=list)
    silenced_spaces: list[str] = Field(default_factory=list)


class RecallResult(Answer):
    ok: bool = True
    data: RecallData

    @property
    def memories(self) -> list[RankedMemory]:
        return self.data.ranked_memory_list


class ContextPackRequest(Request):
    """`POST /api/v1/context-packs/`: a task pack for a query, or a boot pack for a space."""

    query: str = ""
    active_task: str | None = None
    spaces: list[str] | None = None
    pack_type: Literal["task", "boot"] | None = None
    k: int | None = None
    token_budget: int | None = None


class ContextPack(Answer):
    json_: dict[str, Any] = Field(alias="json")
    markdown: str


# --- sessions ------------------------------------------------------------------------------

class Handoff(Answer):
    """A session's handoff: what changed, shipped and failed, decisions, open questions and
    next steps (`json`), and the same as Markdown."""

    json_: dict[str, Any] = Field(alias="json")
    markdown: str


# --- chat imports ----------------------------------------------------------------------------

ChatSource = Literal["claude_code", "chatgpt", "cursor", "jsonl"]


class ChatImport(Answer):
    id: str
    space: str
    source: str
    status: str
    file_name: str = ""
    size_bytes: int = 0
    report: dict[str, Any] = Field(default_factory=dict)
    error: str = ""
    extraction_done: bool = False
    memories: int = 0
    pending: dict[str, int] = Field(default_factory=dict)
    final: bool = False
    created_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def finished(self) -> bool:
        """The job has read the history (done or failed); memories may still settle."""
        return self.extraction_done or self.status in {"done", "failed"}


# --- tokens ---------------------------------------------------------------------------------

class TokenCreate(Request):
    """`POST /api/v1/me/tokens/`. `spaces` None means every space of mine."""

    name: str
    spaces: list[str] | None = None
    role: str | None = None
    scopes: list[str] | None = None
    expires_at: datetime | None = None


class Token(Answer):
    id: int | str
    name: str
    prefix: str = ""
    spaces: list[str] | None = None
    role: str | None = None
    scopes: list[str] = Field(default_factory=list)
    expires_at: datetime | None = None
    created_at: datetime | None = None
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None
    usable: bool = True


class TokenCreated(Token):
    """A new token: `secret` is shown this once; SAM keeps only its hash."""

    secret: str
