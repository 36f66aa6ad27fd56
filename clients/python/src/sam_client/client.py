"""SAM's API as Python calls: `SamClient` (sync) and `AsyncSamClient` (asyncio), on httpx.

    with SamClient("http://127.0.0.1:8000", token="sam_…") as sam:
        sam.remember(space="webshop", title="Logs are JSON", content="…")
        for hit in sam.recall("how do we log?", spaces=["webshop"]).memories: …
        for memory in sam.iter_memories(space="webshop"): …

Both run the same `Call`s (sam_client._calls). Refusals raise sam_client.errors.SamError
subclasses carrying SAM's code, status and field messages.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx

from sam_client import _calls as calls
from sam_client import models as m
from sam_client.errors import SamError, TransportError, error_from_response

T = TypeVar("T")
RETRY_STATUSES = frozenset({502, 503, 504})
DEFAULT_TIMEOUT = 30.0


class _Base:
    def __init__(self, base_url: str, token: str, *, max_retries: int, backoff: float) -> None:
        self.base_url = base_url.rstrip("/")
        self._base_path = httpx.URL(self.base_url).path.rstrip("/")
        self.token = token
        self.max_retries = max_retries
        self.backoff = backoff

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}

    def _delay(self, attempt: int) -> float:
        return float(min(self.backoff * (2 ** attempt), 5.0))

    def _should_retry(self, call: calls.Call[Any], attempt: int, *, response: httpx.Response | None,
                      error: httpx.TransportError | None) -> bool:
        if attempt >= self.max_retries:
            return False
        if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout):
            return True  # the request never reached SAM
        if not call.retry_safe:
            return False
        return error is not None or (response is not None and response.status_code in RETRY_STATUSES)

    @staticmethod
    def _finish(call: calls.Call[T], response: httpx.Response) -> T:
        if response.status_code >= 400:
            raise error_from_response(response)
        return call.parse(response)

    @staticmethod
    def _lost(call: calls.Call[Any], error: httpx.TransportError) -> TransportError:
        return TransportError(f"{call.method} {call.path}: {error.__class__.__name__}: {error}".strip(),
                              code="unreachable")

    @staticmethod
    def _recall(query: str, **options: Any) -> m.Recall:
        return m.Recall(query=query, **options)


class SamClient(_Base):
    """The sync client. `transport` is handed to httpx (tests, proxies, unix sockets)."""

    def __init__(self, base_url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT, max_retries: int = 3,
                 backoff: float = 0.2, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(base_url, token, max_retries=max_retries, backoff=backoff)
        self._http = httpx.Client(base_url=self.base_url, headers=self._headers(), timeout=timeout,
                                  transport=transport)

    def __enter__(self) -> SamClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _run(self, call: calls.Call[T]) -> T:
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                response = self._http.request(call.method, call.path, params=call.params, json=call.json,
                                              files=call.files, data=call.data, headers=call.headers)
            except httpx.TransportError as error:
                if not self._should_retry(call, attempt, response=None, error=error):
                    raise self._lost(call, error) from error
            else:
                if not self._should_retry(call, attempt, response=response, error=None):
                    return self._finish(call, response)
            time.sleep(self._delay(attempt))
            attempt += 1

    # --- memories ---------------------------------------------------------------------------
    def remember(self, *, space: str, title: str, content: str, idempotency_key: str | None = None,
                 **fields: Any) -> m.MemoryWrite:
        """Store a memory (201), or reinforce the one the space holds already (`reinforced`).
        Retries reuse one Idempotency-Key (yours, or one made for this call)."""
        memory = m.MemoryCreate(space=space, title=title, content=content, **fields)
        return self._run(calls.remember(memory, idempotency_key))

    def create_memory(self, memory: m.MemoryCreate, *, idempotency_key: str | None = None) -> m.MemoryWrite:
        return self._run(calls.remember(memory, idempotency_key))

    def remember_many(self, memories: list[m.MemoryCreate], *, atomic: bool = False,
                      idempotency_key: str | None = None) -> m.BulkResult:
        """Bulk create (up to 1000): per-row results; `atomic` for all or nothing."""
        return self._run(calls.remember_many(memories, atomic=atomic, idempotency_key=idempotency_key))

    def get_memory(self, memory_id: str) -> m.Memory:
        return self._run(calls.memory_get(memory_id))

    def edit_memory(self, memory_id: str, *, version: int, **changes: Any) -> m.MemoryWrite:
        """A new version; `version` must be the current one (else Conflict `version_conflict`)."""
        return self._run(calls.memory_edit(memory_id, m.MemoryEdit(version=version, **changes)))

    def delete_memory(self, memory_id: str) -> None:
        self._run(calls.memory_delete(memory_id))

    def list_memories(self, *, page: int = 1, page_size: int | None = None,
                      **filters: Any) -> m.Page[m.Memory]:
        """One page; filters as the API names them (space, kind, tags, text, archived, …)."""
        return self._run(calls.memories_page(page=page, page_size=page_size, filters=filters))

    def iter_memories(self, *, page_size: int | None = None, **filters: Any) -> Iterator[m.Memory]:
        """Every memory the filters match, page after page (following `next`)."""
        return self._pages(self.list_memories(page_size=page_size, **filters))

    def iter_my_memories(self, *, kind_group: str | None = None,
                         page_size: int | None = None) -> Iterator[m.Memory]:
        """What SAM knows about me (`/me/memories/`)."""
        return self._pages(self._run(calls.my_memories_page(page=1, page_size=page_size,
                                                            kind_group=kind_group)))

    def _pages(self, page: m.Page[T]) -> Iterator[T]:
        while True:
            yield from page.results
            if not page.next:
                return
            page = self._run(calls.next_page(page.next, type(page), base_path=self._base_path))

    # --- recall, packs, handoffs --------------------------------------------------------------
    def recall(self, query: str = "", **options: Any) -> m.RecallResult:
        """Ranked memories for a query or task (spaces, k, active_task, filters, token_budget)."""
        return self._run(calls.recall(self._recall(query, **options)))

    def context_pack(self, query: str = "", **options: Any) -> m.ContextPack:
        """A context pack (JSON and Markdown of one selection) within `token_budget`."""
        return self._run(calls.context_pack(m.ContextPackRequest(query=query, **options)))

    def latest_handoff(self, space: str) -> m.Handoff:
        return self._run(calls.latest_handoff(space))

    def session_handoff(self, session_id: str) -> m.Handoff:
        return self._run(calls.session_handoff(session_id))

    # --- chat imports, export -----------------------------------------------------------------
    def upload_chat_history(self, space: str, path: str | Path, *, source: m.ChatSource) -> m.ChatImport:
        """Queue an import of a chat history file (or a .zip) into `space`; 202 with its status."""
        path = Path(path)
        return self._run(calls.chat_import_upload(space, source=source, file_name=path.name,
                                                  content=path.read_bytes()))

    def get_chat_import(self, import_id: str) -> m.ChatImport:
        return self._run(calls.chat_import_get(import_id))

    def wait_for_chat_import(self, import_id: str, *, until_final: bool = True, timeout: float = 300.0,
                             interval: float = 1.0) -> m.ChatImport:
        """Poll until the job has read the history (and, with `until_final`, until its memories
        are embedded and checked). Raises TimeoutError with the last status in its message."""
        deadline = time.monotonic() + timeout
        while True:
            current = self.get_chat_import(import_id)
            if _settled(current, until_final=until_final):
                return current
            if time.monotonic() >= deadline:
                raise TimeoutError(f"import {import_id} is still {current.status} after {timeout:g}s")
            time.sleep(interval)

    def export_me(self, *, include_archived: bool = False) -> Iterator[str]:
        """Everything SAM knows about me, as the lines of a JSONL bundle (one entry each)."""
        params = calls.export_params(include_archived)
        with self._http.stream("GET", calls.EXPORT_PATH, params=params) as answer:
            if answer.status_code >= 400:
                answer.read()
                raise error_from_response(answer)
            for line in answer.iter_lines():
                if line.strip():
                    yield line

    # --- tokens -------------------------------------------------------------------------------
    def list_tokens(self, *, page: int = 1, page_size: int | None = None) -> m.Page[m.Token]:
        return self._run(calls.tokens_page(page=page, page_size=page_size))

    def iter_tokens(self, *, page_size: int | None = None) -> Iterator[m.Token]:
        return self._pages(self.list_tokens(page_size=page_size))

    def create_token(self, name: str, **options: Any) -> m.TokenCreated:
        """A new agent token of mine (spaces, role, scopes, expires_at); its secret is shown once."""
        return self._run(calls.token_create(m.TokenCreate(name=name, **options)))

    def revoke_token(self, token_id: int | str) -> None:
        self._run(calls.token_revoke(token_id))


class AsyncSamClient(_Base):
    """The asyncio client: the same calls as SamClient, awaited."""

    def __init__(self, base_url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT, max_retries: int = 3,
                 backoff: float = 0.2, transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(base_url, token, max_retries=max_retries, backoff=backoff)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=self._headers(), timeout=timeout,
                                       transport=transport)

    async def __aenter__(self) -> AsyncSamClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _run(self, call: calls.Call[T]) -> T:
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                response = await self._http.request(call.method, call.path, params=call.params,
                                                    json=call.json, files=call.files, data=call.data,
                                                    headers=call.headers)
            except httpx.TransportError as error:
                if not self._should_retry(call, attempt, response=None, error=error):
                    raise self._lost(call, error) from error
            else:
                if not self._should_retry(call, attempt, response=response, error=None):
                    return self._finish(call, response)
            await asyncio.sleep(self._delay(attempt))
            attempt += 1

    # --- memories ---------------------------------------------------------------------------
    async def remember(self, *, space: str, title: str, content: str, idempotency_key: str | None = None,
                       **fields: Any) -> m.MemoryWrite:
        memory = m.MemoryCreate(space=space, title=title, content=content, **fields)
        return await self._run(calls.remember(memory, idempotency_key))

    async def create_memory(self, memory: m.MemoryCreate, *,
                            idempotency_key: str | None = None) -> m.MemoryWrite:
        return await self._run(calls.remember(memory, idempotency_key))

    async def remember_many(self, memories: list[m.MemoryCreate], *, atomic: bool = False,
                            idempotency_key: str | None = None) -> m.BulkResult:
        return await self._run(calls.remember_many(memories, atomic=atomic, idempotency_key=idempotency_key))

    async def get_memory(self, memory_id: str) -> m.Memory:
        return await self._run(calls.memory_get(memory_id))

    async def edit_memory(self, memory_id: str, *, version: int, **changes: Any) -> m.MemoryWrite:
        return await self._run(calls.memory_edit(memory_id, m.MemoryEdit(version=version, **changes)))

    async def delete_memory(self, memory_id: str) -> None:
        await self._run(calls.memory_delete(memory_id))

    async def list_memories(self, *, page: int = 1, page_size: int | None = None,
                            **filters: Any) -> m.Page[m.Memory]:
        return await self._run(calls.memories_page(page=page, page_size=page_size, filters=filters))

    async def iter_memories(self, *, page_size: int | None = None, **filters: Any) -> AsyncIterator[m.Memory]:
        async for memory in self._pages(await self.list_memories(page_size=page_size, **filters)):
            yield memory

    async def iter_my_memories(self, *, kind_group: str | None = None,
                               page_size: int | None = None) -> AsyncIterator[m.Memory]:
        first = await self._run(calls.my_memories_page(page=1, page_size=page_size, kind_group=kind_group))
        async for memory in self._pages(first):
            yield memory

    async def _pages(self, page: m.Page[T]) -> AsyncIterator[T]:
        while True:
            for item in page.results:
                yield item
            if not page.next:
                return
            page = await self._run(calls.next_page(page.next, type(page), base_path=self._base_path))

    # --- recall, packs, handoffs --------------------------------------------------------------
    async def recall(self, query: str = "", **options: Any) -> m.RecallResult:
        return await self._run(calls.recall(self._recall(query, **options)))

    async def context_pack(self, query: str = "", **options: Any) -> m.ContextPack:
        return await self._run(calls.context_pack(m.ContextPackRequest(query=query, **options)))

    async def latest_handoff(self, space: str) -> m.Handoff:
        return await self._run(calls.latest_handoff(space))

    async def session_handoff(self, session_id: str) -> m.Handoff:
        return await self._run(calls.session_handoff(session_id))

    # --- chat imports, export -----------------------------------------------------------------
    async def upload_chat_history(self, space: str, path: str | Path, *,
                                  source: m.ChatSource) -> m.ChatImport:
        path = Path(path)
        return await self._run(calls.chat_import_upload(space, source=source, file_name=path.name,
                                                        content=path.read_bytes()))

    async def get_chat_import(self, import_id: str) -> m.ChatImport:
        return await self._run(calls.chat_import_get(import_id))

    async def wait_for_chat_import(self, import_id: str, *, until_final: bool = True, timeout: float = 300.0,
                                   interval: float = 1.0) -> m.ChatImport:
        deadline = time.monotonic() + timeout
        while True:
            current = await self.get_chat_import(import_id)
            if _settled(current, until_final=until_final):
                return current
            if time.monotonic() >= deadline:
                raise TimeoutError(f"import {import_id} is still {current.status} after {timeout:g}s")
            await asyncio.sleep(interval)

    async def export_me(self, *, include_archived: bool = False) -> AsyncIterator[str]:
        async with self._http.stream("GET", calls.EXPORT_PATH,
                                     params=calls.export_params(include_archived)) as answer:
            if answer.status_code >= 400:
                await answer.aread()
                raise error_from_response(answer)
            async for line in answer.aiter_lines():
                if line.strip():
                    yield line

    # --- tokens -------------------------------------------------------------------------------
    async def list_tokens(self, *, page: int = 1, page_size: int | None = None) -> m.Page[m.Token]:
        return await self._run(calls.tokens_page(page=page, page_size=page_size))

    async def iter_tokens(self, *, page_size: int | None = None) -> AsyncIterator[m.Token]:
        async for token in self._pages(await self.list_tokens(page_size=page_size)):
            yield token

    async def create_token(self, name: str, **options: Any) -> m.TokenCreated:
        return await self._run(calls.token_create(m.TokenCreate(name=name, **options)))

    async def revoke_token(self, token_id: int | str) -> None:
        await self._run(calls.token_revoke(token_id))


def _settled(chat_import: m.ChatImport, *, until_final: bool) -> bool:
    if chat_import.status == "failed":
        return True
    return chat_import.final if until_final else chat_import.finished


__all__ = ["AsyncSamClient", "SamClient", "SamError"]
