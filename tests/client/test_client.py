"""The Python client against a live SAM: writes, reads, paging, errors and safe retries, sync
and async."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from sam_client import AsyncSamClient, SamClient, errors
from sam_client.models import MemoryCreate

from memories.models import Memory
from tests.client.conftest import World


def stored(space: str, title: str) -> int:
    """How many memories of the space have this title (titles are sealed: compared in Python)."""
    return sum(1 for memory in Memory.objects.filter(space__slug=space) if memory.title == title)


class LoseTheFirstAnswer(httpx.HTTPTransport):
    """Sends every request to SAM, but drops the answer to the first write, as a connection
    that breaks after the server committed would: the client sees a ReadError."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[str | None] = []
        self.lost = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "POST":
            return response
        self.keys.append(request.headers.get("Idempotency-Key"))
        if self.lost == 0:
            self.lost += 1
            response.read()
            response.close()
            raise httpx.ReadError("connection reset before the answer arrived", request=request)
        return response


class LoseTheFirstAnswerAsync(httpx.AsyncHTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.keys: list[str | None] = []
        self.lost = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        if request.method != "POST":
            return response
        self.keys.append(request.headers.get("Idempotency-Key"))
        if self.lost == 0:
            self.lost += 1
            await response.aread()
            await response.aclose()
            raise httpx.ReadError("connection reset before the answer arrived", request=request)
        return response


def test_a_memory_is_remembered_read_edited_listed_and_deleted(world: World):
    with SamClient(world.url, world.owner_token) as sam:
        # when a memory is remembered
        written = sam.remember(space="webshop", title="Logs are JSON", kind="decision",
                               content="Services log one JSON object per line to stdout.")
        memory = written.memory
        assert memory is not None
        assert written.persisted
        assert not written.reinforced
        # then it reads back, edits to a new version, and a stale edit is a Conflict
        assert sam.get_memory(memory.id).content == "Services log one JSON object per line to stdout."
        edited = sam.edit_memory(memory.id, version=1, title="Logs are JSON lines", reason="clearer")
        assert edited.memory is not None
        assert edited.memory.version == 2
        with pytest.raises(errors.Conflict) as stale:
            sam.edit_memory(memory.id, version=1, title="Too late")
        assert (stale.value.status, stale.value.code) == (409, "version_conflict")
        # and it is listed by the space's filter, then deleted for good
        assert memory.id in {row.id for row in sam.iter_memories(space="webshop")}
        sam.delete_memory(memory.id)
        with pytest.raises(errors.NotFound):
            sam.get_memory(memory.id)


def test_bulk_create_reports_each_row(world: World):
    with SamClient(world.url, world.owner_token) as sam:
        result = sam.remember_many([
            MemoryCreate(space="webshop", title="Feature flags live in settings",
                         content="Feature flags are read from Django settings, never from the database."),
            MemoryCreate(space="webshop", title="x", content="too short"),
        ])
    assert (result.created, result.failed) == (1, 1)
    assert [row.ok for row in result.results] == [True, False]
    assert result.results[0].id
    assert "title" in result.results[1].errors


def test_a_retried_write_with_its_key_is_stored_once(world: World):
    # given a connection that loses the answer to the first create, after SAM committed it
    transport = LoseTheFirstAnswer()
    with SamClient(world.url, world.owner_token, transport=transport, backoff=0.01) as sam:
        # when the client remembers (it retries by itself)
        written = sam.remember(space="webshop", title="Cache keys carry the version",
                               content="Every cache key starts with the schema version so a deploy never "
                                       "reads a stale shape.")
    # then both tries carried one key, the second was a replay, and one memory exists
    assert len(transport.keys) == 2
    assert transport.keys[0]
    assert transport.keys[0] == transport.keys[1]
    assert written.replayed
    assert stored("webshop", "Cache keys carry the version") == 1


def test_a_bulk_write_retried_with_the_callers_key_is_stored_once(world: World):
    transport, key = LoseTheFirstAnswer(), f"bulk-{uuid.uuid4()}"
    with SamClient(world.url, world.owner_token, transport=transport, backoff=0.01) as sam:
        result = sam.remember_many([MemoryCreate(
            space="webshop", title="Prices include VAT",
            content="Shown prices include VAT; the invoice splits it out per line.")], idempotency_key=key)
    assert transport.keys == [key, key]
    assert result.replayed
    assert result.created == 1
    assert stored("webshop", "Prices include VAT") == 1


def test_a_write_is_not_retried_without_retries(world: World):
    transport = LoseTheFirstAnswer()
    with SamClient(world.url, world.owner_token, transport=transport, max_retries=0) as sam, \
            pytest.raises(errors.TransportError):
        sam.remember(space="webshop", title="Queues are per tenant",
                     content="Each tenant has its own job queue so one noisy tenant cannot starve the rest.")
    assert len(transport.keys) == 1


def test_paging_walks_every_page(world: World):
    with SamClient(world.url, world.owner_token) as sam:
        made = set()
        for n in range(5):
            written = sam.remember(space="payroll", title=f"Payroll rule number {n}",
                                   content=f"Payroll rule {n}: salaries are paid on working day {n + 20}.")
            assert written.memory is not None
            made.add(written.memory.id)
        first = sam.list_memories(space="payroll", page_size=2)
        assert (first.count, len(first.results), first.previous) == (5, 2, None)
        assert first.next
        assert {memory.id for memory in sam.iter_memories(space="payroll", page_size=2)} == made


def test_recall_and_a_context_pack_find_what_the_space_holds(world: World):
    with SamClient(world.url, world.owner_token) as sam:
        recalled = sam.recall("how should we store money amounts?", spaces=["webshop"], k=3)
        pack = sam.context_pack("store money amounts", spaces=["webshop"], token_budget=400)
    assert recalled.memories[0].title == "Money is stored as Decimal"
    assert recalled.memories[0].rationale
    assert "Decimal" in pack.markdown
    assert pack.json_


def test_errors_carry_sams_code_status_and_fields(world: World):
    with SamClient(world.url, world.owner_token) as owner:
        with pytest.raises(errors.ValidationError) as invalid:
            owner.remember(space="webshop", title="x", content="short")
        assert (invalid.value.status, invalid.value.code) == (400, "invalid")
        assert invalid.value.fields["title"]
        with pytest.raises(errors.NotFound) as missing:
            owner.get_memory("mem_does_not_exist")
        assert (missing.value.status, missing.value.code) == (404, "not_found")
    with SamClient(world.url, world.viewer_token) as viewer, pytest.raises(errors.PermissionDenied) as denied:
        viewer.remember(space="webshop", title="Viewers cannot write",
                        content="A viewer of the space may read it but never write to it.")
    assert (denied.value.status, denied.value.code) == (403, "forbidden")
    with SamClient(world.url, "sam_not_a_token") as nobody, \
            pytest.raises(errors.AuthenticationError) as refused:
        nobody.recall("anything")
    assert refused.value.status == 401


def test_sam_unreachable_is_a_transport_error_after_retries(world: World):
    with SamClient("http://127.0.0.1:9", world.owner_token, max_retries=1, backoff=0.01) as sam, \
            pytest.raises(errors.TransportError):
        sam.recall("anything")


def test_the_async_client_does_the_same(world: World):
    async def work() -> None:
        transport = LoseTheFirstAnswerAsync()
        async with AsyncSamClient(world.url, world.owner_token, transport=transport, backoff=0.01) as sam:
            written = await sam.remember(space="payroll", title="Bonuses are paid in March",
                                         content="Yearly bonuses are paid with the March salary.")
            assert written.replayed
            assert transport.keys[0] == transport.keys[1]
            await sam.remember(space="payroll", title="Payslips are PDFs",
                               content="Payslips are sent as PDF files on the last working day.")
            titles = [memory.title async for memory in sam.iter_memories(space="payroll", page_size=1)]
            assert sorted(titles) == ["Bonuses are paid in March", "Payslips are PDFs"]
            recalled = await sam.recall("when are bonuses paid?", spaces=["payroll"])
            assert recalled.memories[0].title == "Bonuses are paid in March"
            with pytest.raises(errors.NotFound):
                await sam.get_memory("mem_does_not_exist")
            exported = [line async for line in sam.export_me()]
            assert len(exported) == 2
            mine = [memory.title async for memory in sam.iter_my_memories(page_size=1)]
            assert sorted(mine) == ["Bonuses are paid in March", "Payslips are PDFs"]
    asyncio.run(work())
    assert stored("payroll", "Bonuses are paid in March") == 1
