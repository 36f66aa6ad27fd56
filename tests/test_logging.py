"""Logs are JSON lines carrying the request id that the response and the audit record carry,
and no memory text, query, token or key."""

import io
import json
import logging
from importlib import import_module

import pytest
from django.conf import settings

from governance.audit.models import AuditEvent

SECRET_TEXT = "Quartz-lantern-7781 is the vault passphrase for the Lisbon office"
QUERY = "where does the quartz lantern open"


@pytest.fixture
def lines():
    """SAM's own logging configuration (JSON, request ids) on a buffer, everything at DEBUG."""
    from logging.config import dictConfig

    buffer = io.StringIO()
    production = import_module("samsite.settings.base").LOGGING
    dictConfig({
        "version": 1, "disable_existing_loggers": False,
        "filters": production["filters"],
        "formatters": {"json": dict(production["formatters"]["json"])},
        "handlers": {"buffer": {"class": "logging.StreamHandler", "stream": buffer, "filters": ["request_id"],
                                "formatter": "json"}},
        "root": {"handlers": ["buffer"], "level": "DEBUG"},
    })
    yield lambda: [json.loads(line) for line in buffer.getvalue().splitlines()]
    dictConfig(settings.LOGGING)  # the test settings' own (silent) again


def test_log_lines_are_json_with_the_request_id_and_no_memory_text(api, space, lines, on_commit):
    with on_commit():
        created = api.post("/api/v1/memories/", {"space": space.slug, "title": "Vault passphrase",
                                                 "content": SECRET_TEXT}, format="json",
                           HTTP_X_REQUEST_ID="req-create-1")
    api.post("/api/v1/recall/", {"query": QUERY}, format="json", HTTP_X_REQUEST_ID="req-recall-1")
    missing = api.get("/api/v1/spaces/nope/entities/", {"search": "Quartz-lantern-7781"},
                      HTTP_X_REQUEST_ID="req-missing-1")
    refused = api.post("/api/v1/memories/", {"space": space.slug, "title": "x"}, format="json",
                       HTTP_X_REQUEST_ID="req-refused-1")
    logging.getLogger("samsite.probe").info("outside any request")

    logged = lines()
    text = json.dumps(logged)

    assert created.status_code == 201
    assert (missing.status_code, refused.status_code) == (404, 400)
    assert logged, "nothing was logged"
    assert all({"time", "level", "logger", "message", "request_id"} <= set(line) for line in logged)
    by_request = {line["request_id"] for line in logged}
    assert {"req-missing-1", "req-refused-1"} <= by_request
    assert None in by_request  # the line logged outside a request
    # The same id is in the response and in the audit record of the write.
    assert created["X-Request-ID"] == "req-create-1"
    assert AuditEvent.objects.filter(request_id="req-create-1", action="create").exists()
    token = api._credentials["HTTP_AUTHORIZATION"].split()[1]
    for secret in ("Quartz-lantern-7781", "vault passphrase", QUERY, token):
        assert secret.lower() not in text.lower()
