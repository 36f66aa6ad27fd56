"""MCP tools call SAM's REST API in-process: one path to the data, not two.

A tool call becomes an API request handled by Django's own WSGI handler (the whole
middleware stack, DRF authentication with the caller's token, the gateway, memory modes,
redaction, audit, the JSON error shape), without a network hop. So a scoped or role-capped
token limits a tool exactly as it limits the REST call, and every error carries SAM's code.
"""

from __future__ import annotations

import io
import json
import sys
import uuid
from contextlib import closing
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler

from governance.authentication import AUTHENTICATED_KEY

_handler: WSGIHandler | None = None


def _wsgi() -> WSGIHandler:
    # Built once per process: it loads the middleware chain.
    global _handler
    if _handler is None:
        _handler = WSGIHandler()
    return _handler


def _default_host() -> str:
    for host in settings.ALLOWED_HOSTS:
        if host != "*":
            return host.lstrip(".")
    return "localhost"


@dataclass(frozen=True)
class Caller:
    """Who calls and how the REST requests made for them should look."""

    authorization: str  # the Authorization header, e.g. "Bearer sam_…"
    host: str = ""
    secure: bool = False
    request_id: str = ""


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return self.status < 400


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body and its content type (for the upload endpoints)."""
    boundary = f"sam-{uuid.uuid4().hex}"
    parts = []
    for name, value in fields.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
        parts.append(f"{head}{value}\r\n".encode())
    for name, (file_name, data) in files.items():
        safe = file_name.replace('"', "").replace("\r", "").replace("\n", "")
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{safe}"\r\n'
                     f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


# The (Authorization header, (user, token)) the MCP request in flight was authenticated with
# (samsite.mcp.http): a tool's REST calls with that same header reuse it. A context variable,
# so it follows the request onto the SDK's event loop and into the tool's thread, and no
# other request sees it.
authenticated: ContextVar[tuple[bytes, tuple[Any, Any]] | None] = ContextVar("sam_mcp_authenticated",
                                                                             default=None)


def call(caller: Caller, method: str, path: str, *, body: Any = None,
         query: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
         raw: tuple[bytes, str] | None = None) -> Answer:
    """Run one API request as `caller` and return its status and decoded JSON body.

    `raw` is a body already encoded, with its content type (a multipart upload)."""
    payload = json.dumps(body).encode() if body is not None else b""
    content_type = "application/json"
    if raw is not None:
        payload, content_type = raw
    captured: dict[str, Any] = {}

    def start_response(status: str, response_headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        captured["status"] = int(status.split(" ", 1)[0])
        return lambda data: None

    environ: dict[str, Any] = {
        "REQUEST_METHOD": method.upper(), "SCRIPT_NAME": "", "PATH_INFO": path,
        "QUERY_STRING": urlencode({k: v for k, v in (query or {}).items() if v is not None}, doseq=True),
        "SERVER_NAME": "localhost", "SERVER_PORT": "443" if caller.secure else "80",
        "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_HOST": caller.host or _default_host(),
        "HTTP_AUTHORIZATION": caller.authorization, "HTTP_ACCEPT": "application/json",
        "HTTP_USER_AGENT": "sam-mcp", "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(payload)), "wsgi.input": io.BytesIO(payload),
        "wsgi.url_scheme": "https" if caller.secure else "http", "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0), "wsgi.multithread": True, "wsgi.multiprocess": True, "wsgi.run_once": False,
    }
    if caller.request_id:
        environ["HTTP_X_REQUEST_ID"] = caller.request_id
    known = authenticated.get()
    if known is not None and known[0] == caller.authorization.encode("latin-1"):
        environ[AUTHENTICATED_KEY] = known
    for name, value in (headers or {}).items():
        environ[f"HTTP_{name.upper().replace('-', '_')}"] = value
    # closing(): the response's close() sends request_finished, which returns the
    # thread's database connection as a real request would.
    with closing(_wsgi()(environ, start_response)) as response:
        content = b"".join(response)
    try:
        decoded = json.loads(content) if content else None
    except ValueError:
        decoded = {"error": {"code": "unexpected_answer", "message": content[:200].decode(errors="replace")}}
    return Answer(status=captured["status"], body=decoded)
