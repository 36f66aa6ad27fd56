"""`/mcp/`: the MCP server over streamable HTTP, served by SAM's own web processes.

SAM's web server is WSGI (gunicorn's threads serve the REST API); the MCP SDK's HTTP
transport is an ASGI app. Each web process runs that app on one event loop in a
background thread, and this view hands it each request and waits for the answer. The app
runs stateless with JSON answers: every POST carries one JSON-RPC message and gets its
answer in the response, so any web process (or machine) can take any request, and no
session needs to stick to a process.

The caller's token is checked here first (401 in SAM's error shape); each tool then calls
the REST API with that same token (samsite.mcp.dispatch), which reuses this check rather
than looking the token up again.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.transport_security import TransportSecuritySettings
from rest_framework import exceptions
from starlette.types import ASGIApp, Message

from core.api.exceptions import error_body
from governance.authentication import authenticate_header
from samsite.mcp import dispatch
from samsite.mcp.server import build_server

# How long a request may wait for its answer (a recall with a cold model takes seconds).
ANSWER_TIMEOUT_SECONDS = 120
PATH = "/mcp"

class _Runner:
    """The MCP ASGI app on its own event loop thread, started on first use in a process
    (after gunicorn forks, so each worker has its own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._app: ASGIApp | None = None

    def _start(self) -> tuple[asyncio.AbstractEventLoop, ASGIApp]:
        with self._lock:
            if self._loop is None or self._app is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=_serve_forever, args=(loop,), name="sam-mcp", daemon=True).start()
                # Host and origin are checked by Django (ALLOWED_HOSTS) before this view,
                # and a bearer token (never a cookie) authenticates: no rebinding to guard.
                app = build_server().streamable_http_app(
                    streamable_http_path=PATH, json_response=True, stateless_http=True,
                    transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
                asyncio.run_coroutine_threadsafe(_started(app), loop).result(timeout=30)
                self._loop, self._app = loop, app
            return self._loop, self._app

    def answer(self, scope: dict[str, Any], body: bytes, *, authorization: bytes, found: tuple[Any, Any]
               ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        loop, app = self._start()
        exchange = _exchange(app, scope, body, authorization, found)
        return asyncio.run_coroutine_threadsafe(exchange, loop).result(timeout=ANSWER_TIMEOUT_SECONDS)


def _serve_forever(loop: asyncio.AbstractEventLoop) -> None:
    """Run the loop for the life of the process, under one task that never ends.

    The SDK runs each (synchronous) tool in a worker thread of anyio's, and anyio stops those
    threads when the task it takes for the loop's root ends. Under `run_forever` it took each
    request's own task, so every tool call started a new thread and, in it, a new database
    connection. A loop run by `run_until_complete` has a root that lives as long as the
    process: tool threads, and their connections, are reused from call to call."""
    asyncio.set_event_loop(loop)
    loop.run_until_complete(asyncio.Event().wait())


async def _started(app: ASGIApp) -> None:
    """Run the app's lifespan (the SDK's session manager lives in it) until it is up; it
    then runs for the life of the process."""
    up = asyncio.Event()
    failed: list[str] = []
    messages = iter([{"type": "lifespan.startup"}])

    async def receive() -> Message:
        message = next(messages, None)
        if message is None:
            await asyncio.Event().wait()  # never shut down: the process ends instead
        return message or {}

    async def send(message: Message) -> None:
        if message["type"] == "lifespan.startup.failed":
            failed.append(str(message.get("message", "")))
        if message["type"].startswith("lifespan.startup."):
            up.set()

    _keep.append(asyncio.ensure_future(app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                                           receive, send)))
    await up.wait()
    if failed:
        raise RuntimeError(f"the MCP app did not start: {failed[0]}")


_keep: list[asyncio.Future[None]] = []  # the lifespan task, kept from the garbage collector


async def _exchange(app: ASGIApp, scope: dict[str, Any], body: bytes, authorization: bytes,
                    found: tuple[Any, Any]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    # Set in this request's own task: the app's task, and the tool threads it starts, copy it.
    dispatch.authenticated.set((authorization, found))
    sent = False
    done = asyncio.Event()
    answer: dict[str, Any] = {"status": 500, "headers": [], "body": []}

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer["status"], answer["headers"] = message["status"], list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            answer["body"].append(message.get("body", b""))
            if not message.get("more_body"):
                done.set()

    task = asyncio.ensure_future(app(scope, receive, send))
    waiter = asyncio.ensure_future(done.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if not done.is_set():
        await task  # the app ended without a full answer: raise what it raised
    elif not task.done():
        done.set()
        await asyncio.wait({task}, timeout=5)
    return answer["status"], answer["headers"], b"".join(answer["body"])


_runner = _Runner()


def _scope(request: HttpRequest) -> dict[str, Any]:
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1"))
               for name, value in request.headers.items() if name.lower() != "x-sam-scheme"]
    headers.append((b"x-sam-scheme", b"https" if request.is_secure() else b"http"))
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": request.method,
        "scheme": request.scheme, "path": PATH, "raw_path": PATH.encode(), "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"), "headers": headers,
        "client": (request.META.get("REMOTE_ADDR", ""), 0), "server": (request.get_host(), 0),
    }


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    """The MCP endpoint (POST one JSON-RPC message; answers are JSON)."""
    authorization = request.headers.get("Authorization", "").encode("latin-1")
    try:
        found = authenticate_header(authorization)
    except exceptions.AuthenticationFailed as exc:
        found, reason = None, str(exc.detail)
    else:
        reason = "Send an Authorization: Bearer token (a SAM agent token)."
    if found is None:
        refused = JsonResponse(error_body("not_authenticated", reason), status=401)
        refused["WWW-Authenticate"] = 'Bearer realm="sam"'
        return refused
    status, headers, body = _runner.answer(_scope(request), request.body, authorization=authorization,
                                           found=found)
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name.lower() not in (b"content-length", b"connection"):
            response[name.decode("latin-1")] = value.decode("latin-1")
    return response
