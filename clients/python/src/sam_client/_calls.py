"""What each API call sends and how its answer is read, shared by the sync and the async
client: a `Call` is plain data, and each client only runs it (`SamClient._run`,
`AsyncSamClient._run`), so both speak exactly the same API."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx

from sam_client import models as m

T = TypeVar("T")
API = "/api/v1"
IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and the reading of its answer.

    `retry_safe`: sending it twice does no harm, so it may be retried when the answer is
    lost (reads, and writes carrying an Idempotency-Key, which is fixed here, once per call,
    and so the same on every retry). A request that never left (connection refused) is
    retried whatever this says.
    """

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    files: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    retry_safe: bool = False


def _model(kind: type[Any]) -> Callable[[httpx.Response], Any]:
    return lambda response: kind.model_validate(response.json())


def _write(kind: type[Any]) -> Callable[[httpx.Response], Any]:
    def parse(response: httpx.Response) -> Any:
        answer = kind.model_validate(response.json())
        answer.replayed = response.headers.get(REPLAYED_HEADER, "").lower() == "true"
        return answer
    return parse


def _nothing(response: httpx.Response) -> None:
    return None


def _query(**values: Any) -> dict[str, Any]:
    """Query parameters without the unset ones; lists joined by commas, as SAM's filters read them."""
    query: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, list | tuple):
            value = ",".join(str(item) for item in value)
        elif isinstance(value, bool):
            value = "true" if value else "false"
        query[key] = value
    return query


def _key(idempotency_key: str | None) -> dict[str, str]:
    return {IDEMPOTENCY_HEADER: idempotency_key or str(uuid.uuid4())}


# --- memories ---------------------------------------------------------------------------------

def remember(memory: m.MemoryCreate, idempotency_key: str | None) -> Call[m.MemoryWrite]:
    return Call("POST", f"{API}/memories/", _write(m.MemoryWrite), json=memory.body(),
                headers=_key(idempotency_key), retry_safe=True)


def remember_many(memories: list[m.MemoryCreate], *, atomic: bool,
                  idempotency_key: str | None) -> Call[m.BulkResult]:
    body = {"items": [memory.body() for memory in memories], "atomic": atomic}
    return Call("POST", f"{API}/memories/bulk/", _write(m.BulkResult), json=body,
                headers=_key(idempotency_key), retry_safe=True)


def memory_get(memory_id: str) -> Call[m.Memory]:
    return Call("GET", f"{API}/memories/{memory_id}/", _model(m.Memory), retry_safe=True)


def memory_edit(memory_id: str, edit: m.MemoryEdit) -> Call[m.MemoryWrite]:
    # Safe to retry: the edit names its version, so a second copy of an applied edit is a
    # 409 version_conflict, never a second change.
    return Call("PATCH", f"{API}/memories/{memory_id}/", _write(m.MemoryWrite), json=edit.body(),
                retry_safe=True)


def memory_delete(memory_id: str) -> Call[None]:
    return Call("DELETE", f"{API}/memories/{memory_id}/", _nothing)


def memories_page(*, page: int, page_size: int | None, filters: dict[str, Any]) -> Call[m.Page[m.Memory]]:
    return Call("GET", f"{API}/memories/", _model(m.Page[m.Memory]),
                params=_query(page=page, page_size=page_size, **filters), retry_safe=True)


def my_memories_page(*, page: int, page_size: int | None, kind_group: str | None) -> Call[m.Page[m.Memory]]:
    return Call("GET", f"{API}/me/memories/", _model(m.Page[m.Memory]),
                params=_query(page=page, page_size=page_size, kind_group=kind_group), retry_safe=True)


def next_page(url: str, kind: type[m.Page[Any]], *, base_path: str) -> Call[m.Page[Any]]:
    """The page a list's `next` link names. Only its path and query are kept, read against
    the client's own base URL: behind a proxy SAM may name another scheme or host, and the
    token goes nowhere but where the caller pointed the client."""
    target = httpx.URL(url)
    path = target.path
    if base_path and path.startswith(base_path + "/"):
        path = path[len(base_path):]
    return Call("GET", path, _model(kind), params=dict(target.params), retry_safe=True)


# --- recall, packs, handoffs --------------------------------------------------------------------

def recall(request: m.Recall) -> Call[m.RecallResult]:
    # A read, though it counts access: retrying a lost answer at most counts one access twice.
    return Call("POST", f"{API}/recall/", _model(m.RecallResult), json=request.body(), retry_safe=True)


def context_pack(request: m.ContextPackRequest) -> Call[m.ContextPack]:
    return Call("POST", f"{API}/context-packs/", _model(m.ContextPack), json=request.body(),
                retry_safe=True)


def latest_handoff(space: str) -> Call[m.Handoff]:
    return Call("GET", f"{API}/sessions/latest-handoff/", _model(m.Handoff), params={"space": space},
                retry_safe=True)


def session_handoff(session_id: str) -> Call[m.Handoff]:
    return Call("GET", f"{API}/sessions/{session_id}/handoff/", _model(m.Handoff), retry_safe=True)


# --- chat imports and export -------------------------------------------------------------------

def chat_import_upload(space: str, *, source: str, file_name: str, content: bytes) -> Call[m.ChatImport]:
    # Not retried once sent: a second upload would be a second import (which adds nothing
    # new, but is a second job and report).
    return Call("POST", f"{API}/spaces/{space}/chat-imports/", _model(m.ChatImport),
                files={"file": (file_name, content)}, data={"source": source})


def chat_import_get(import_id: str) -> Call[m.ChatImport]:
    return Call("GET", f"{API}/chat-imports/{import_id}/", _model(m.ChatImport), retry_safe=True)


def export_params(include_archived: bool) -> dict[str, Any]:
    return _query(include_archived=include_archived)


EXPORT_PATH = f"{API}/me/export/"


# --- tokens ------------------------------------------------------------------------------------

def tokens_page(*, page: int, page_size: int | None) -> Call[m.Page[m.Token]]:
    return Call("GET", f"{API}/me/tokens/", _model(m.Page[m.Token]),
                params=_query(page=page, page_size=page_size), retry_safe=True)


def token_create(request: m.TokenCreate) -> Call[m.TokenCreated]:
    # Not retried once sent: a lost answer would leave a token whose secret nobody saw;
    # list the tokens and revoke it.
    return Call("POST", f"{API}/me/tokens/", _model(m.TokenCreated), json=request.body())


def token_revoke(token_id: int | str) -> Call[None]:
    return Call("DELETE", f"{API}/me/tokens/{token_id}/", _nothing)
