"""A client generated from SAM's published OpenAPI schema by a common generator
(openapi-python-client) works: it is generated from the live server's /api/schema/ once for
the module, imported, and used for a recall and a paged list, its typed models parsing SAM's
answers."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from tests.client.conftest import World

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "sam_generated_api"


@pytest.fixture(scope="module")
def generated(live_server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("generated")
    schema = root / "schema.json"
    answer = httpx.get(f"{live_server.url}/api/schema/", params={"format": "json"}, timeout=60)
    answer.raise_for_status()
    schema.write_bytes(answer.content)
    # The generator formats its output with ruff, found on PATH.
    environment = {**os.environ, "PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run([str(GENERATOR), "generate", "--path", str(schema), "--meta", "none",
                          "--output-path", str(root / PACKAGE)], capture_output=True, text=True,
                         env=environment, timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    # Every operation generated: the generator skips (and warns about) what it cannot read.
    assert "Warning" not in run.stdout, run.stdout
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def test_the_generated_client_recalls_and_walks_a_paged_list(generated: ModuleType, world: World):
    recall_create = importlib.import_module(f"{PACKAGE}.api.v1.v1_recall_create")
    memories_list = importlib.import_module(f"{PACKAGE}.api.v1.v1_memories_list")
    models = importlib.import_module(f"{PACKAGE}.models")
    client = generated.AuthenticatedClient(base_url=world.url, token=world.owner_token)

    # a recall, its body and answer the generated models
    body = models.RecallInputRequest(query="how should we store money amounts?", spaces=["webshop"], k=2)
    recalled = recall_create.sync(client=client, body=body)
    assert isinstance(recalled, models.RecallOutput), recalled
    assert recalled.data.ranked_memory_list[0].title == "Money is stored as Decimal"

    # a paged list, page after page through the envelope
    first = memories_list.sync(client=client, space="webshop", page_size=2)
    assert isinstance(first, models.PaginatedMemoryOutputList), first
    assert first.count == 3
    assert len(first.results) == 2
    assert first.next_  # the generator's name for `next`
    assert first.previous is None
    second = memories_list.sync(client=client, space="webshop", page_size=2, page=2)
    assert len(second.results) == 1
    titles = {memory.title for memory in [*first.results, *second.results]}
    assert titles == {"Money is stored as Decimal", "Retry webhooks with backoff",
                      "Migrations lock big tables"}

    # SAM's errors are the generated ErrorOutput
    missing = memories_list.sync_detailed(client=client, space="webshop", page_size=2, page=9)
    assert missing.status_code == 404
    assert missing.parsed.error.code == "not_found"
