"""PRD fixtures: personas with real tokens on the `webshop` space, and API helpers."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.personas import member_client

EXECUTIONS = "/api/v1/prd/executions/"
CHAINS = "/api/v1/thinking-chains/"


@pytest.fixture
def personas(api, space) -> dict[str, APIClient]:
    """owner (the suite's `api` user owns `space`), contributor, viewer, and a stranger with no role."""
    clients = {"owner": api}
    for role in ("contributor", "viewer"):
        clients[role] = member_client(space, role, f"prd-{role}")
    clients["stranger"] = member_client(space, None, "prd-stranger")
    return clients


def start(api: APIClient, **fields: Any):
    body = {"space": "webshop", "prd_ref": "docs/prd/checkout.md", "title": "Checkout", **fields}
    return api.post(EXECUTIONS, body, format="json")


def started(api: APIClient, **fields: Any) -> dict:
    response = start(api, **fields)
    assert response.status_code in (200, 201), response.content
    return response.json()["execution"]


def append(api: APIClient, execution_id: str, type_: str, requirement_id: str = "", summary: str = "",
           **fields: Any):
    body = {"type": type_, "requirement_id": requirement_id,
            "summary": summary or f"{type_} {requirement_id}".strip(), **fields}
    return api.post(f"{EXECUTIONS}{execution_id}/events/", body, format="json")


def appended(api: APIClient, execution_id: str, type_: str, requirement_id: str = "", summary: str = "",
             **fields: Any) -> dict:
    response = append(api, execution_id, type_, requirement_id, summary, **fields)
    assert response.status_code == 201, response.content
    return response.json()
