"""Reads from a streaming replica, with read-your-writes for the client that wrote.

With SAM_REPLICA_URL set, the router sends the reads of read-only requests (GET and HEAD,
and the POSTs of views that only read, such as recall and context packs) to the replica:
recall, lists, timelines, details. Everything else uses the primary:

- writes, and every read of a request once it has written, or inside a transaction;
- reads of a client whose last write the replica has not replayed yet. After a request
  that wrote, the primary's WAL position (LSN) is kept for that client (its token or
  session) in the cache; its reads go to the replica only once the replica's replay
  position has passed it. With several web processes the cache must be shared
  (SAM_CACHE_URL), or a client's next request may land on a process that never saw it;
- every read while the replica is down or lags more than SAM_REPLICA_MAX_LAG_SECONDS
  behind the primary, checked at most once a second per process;
- token and session lookups, so a revoked token stops working at once, and the rows rights
  are read from (apps register them: governance its permission rows and restricted tags,
  memories its grants), so a revoked role does too.

A request whose replica query fails (the replica stopped under it) is run again on the
primary, once, when it had written nothing.
"""

from __future__ import annotations

import contextvars
import hashlib
import io
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponseBase

logger = logging.getLogger(__name__)

REPLICA_ALIAS = "replica"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_WRITES = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE", "COPY", "TRUNCATE", "CREATE", "ALTER", "DROP"})
# Models always read where they are written: a revoked token or ended session must not live
# on. Their writes are bookkeeping that changes nothing a client reads back (a token's last
# use, a session's expiry): they neither pin the request to the primary nor make the client
# wait for replay. Django's sessions are here; apps add theirs with `read_from_primary`
# (governance its API tokens), so the ground names no app's table.
_primary_models: set[str] = {"sessions.session"}
_bookkeeping_tables: set[str] = {'"django_session"'}
# How long a replica that failed is left alone before it is tried again.
DOWN_SECONDS = 5.0
CHECK_EVERY_SECONDS = 1.0


def configured() -> bool:
    return REPLICA_ALIAS in settings.DATABASES


def read_from_primary(model: type[Any], *, bookkeeping: bool = True) -> None:
    """Always read `model` from the primary. With `bookkeeping`, its writes are bookkeeping
    (see above); without, they count as any write does. Called from the owning app's
    AppConfig.ready()."""
    _primary_models.add(model._meta.label_lower)
    if bookkeeping:
        _bookkeeping_tables.add(f'"{model._meta.db_table}"')


# --- The WAL position ----------------------------------------------------------------------

def lsn_value(text: str | None) -> int:
    """'16/B374D848' as a number, so positions compare (0 for none)."""
    if not text:
        return 0
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) + int(low, 16)


# --- Replica health, per process ---------------------------------------------------------------

class _Health:
    """The replica's replay position and lag, refreshed at most once a second.

    Lag is measured against the primary, not by the replica's last replay time (which only
    says when the primary last wrote): each check notes the primary's position, and the lag
    is the age of the newest noted position the replica has replayed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.checked_at = 0.0
        self.down_until = 0.0
        self.replayed = 0
        self.lag = 0.0
        self._noted: deque[tuple[float, int]] = deque(maxlen=600)

    def usable(self, *, needs: int = 0) -> bool:
        now = time.monotonic()
        if now < self.down_until:
            return False
        if now - self.checked_at >= CHECK_EVERY_SECONDS or (needs and self.replayed < needs):
            self._check(now)
        if now < self.down_until:
            return False
        return self.lag <= settings.SAM_REPLICA_MAX_LAG_SECONDS and self.replayed >= needs

    def mark_down(self) -> None:
        self.down_until = time.monotonic() + DOWN_SECONDS

    def _check(self, now: float) -> None:
        with self._lock:
            try:
                with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
                    cursor.execute("SELECT pg_current_wal_lsn()::text")
                    primary = lsn_value(cursor.fetchone()[0])
                with connections[REPLICA_ALIAS].cursor() as cursor:
                    cursor.execute("SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()"
                                   " ELSE pg_current_wal_lsn() END::text")
                    replayed = lsn_value(cursor.fetchone()[0])
            except (OperationalError, InterfaceError) as exc:
                logger.warning("read replica unreachable, reading from the primary: %s", exc)
                connections[REPLICA_ALIAS].close()
                self.mark_down()
                return
            self._noted.append((now, primary))
            self.checked_at, self.replayed = now, replayed
            caught_up = [at for at, position in self._noted if position <= replayed]
            self.lag = now - max(caught_up) if caught_up else now - self._noted[0][0]


health = _Health()


# --- What the current request may do --------------------------------------------------------------

@dataclass
class _Reading:
    client: str | None
    needs: int = 0  # the client's last write position the replica must have replayed
    allowed: bool = False  # the view only reads (set before the view runs)
    wrote: bool = False
    replica_failed: bool = False
    can_retry: bool = False  # nothing to replay (a GET) or the body kept for a second run
    choice: str | None = None


_reading: contextvars.ContextVar[_Reading | None] = contextvars.ContextVar("sam_replica_reading",
                                                                           default=None)


def read_alias() -> str:
    """Where the current code's reads go (the router's answer, for raw SQL too)."""
    state = _reading.get()
    if state is None or not state.allowed or state.wrote or state.replica_failed:
        return DEFAULT_DB_ALIAS
    if connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS  # a transaction reads what it writes
    if state.choice is None:
        # Decided once a request, so its reads see one state of the data.
        state.choice = REPLICA_ALIAS if health.usable(needs=state.needs) else DEFAULT_DB_ALIAS
    return state.choice


def will_retry_for(state: _Reading | None) -> bool:
    return bool(state and state.replica_failed and state.can_retry and not state.wrote)


def will_retry() -> bool:
    """Whether the current request lost the replica and is about to run again on the primary
    (so its error is not worth reporting: the caller gets the second run's answer)."""
    return will_retry_for(_reading.get())


class _ReadingConnection:
    """Like `django.db.connection`, for read-only SQL: the replica when the request may use it."""

    def __getattr__(self, name: str) -> Any:
        return getattr(connections[read_alias()], name)


reading_connection: Any = _ReadingConnection()


class ReplicaRouter:
    def db_for_read(self, model: Any, **hints: Any) -> str:
        if model._meta.label_lower in _primary_models:
            return DEFAULT_DB_ALIAS
        return read_alias()

    def db_for_write(self, model: type, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # one database, two copies

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS


# --- The middleware ------------------------------------------------------------------------------

def _client_key(request: HttpRequest) -> str | None:
    credential = request.headers.get("Authorization") or request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    if not credential:
        return None
    return "sam:replica:written:" + hashlib.sha256(credential.encode()).hexdigest()[:32]


def _is_write(sql: str) -> bool:
    words = sql.split(None, 3)
    if not words or words[0].upper() not in _WRITES:
        return False
    # UPDATE t …, INSERT INTO t …, DELETE FROM t …
    table = words[1] if words[0].upper() == "UPDATE" else (words[2] if len(words) > 2 else "")
    return table not in _bookkeeping_tables


class ReplicaReadsMiddleware:
    """Opens each request's routing state, records a client's writes, retries a failed read."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.enabled = configured()

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not self.enabled:
            return self.get_response(request)
        state = _Reading(client=_client_key(request))
        if state.client:
            state.needs = int(cache.get(state.client) or 0)
        response = self._serve(request, state)
        if will_retry_for(state):
            logger.warning("a read on the replica failed; serving the request from the primary")
            state = _Reading(client=state.client, needs=state.needs, replica_failed=True)
            request._stream = io.BytesIO(request.body)
            response = self._serve(request, state)
        if state.wrote and state.client:
            self._remember_write(state.client)
        return response

    def _serve(self, request: HttpRequest, state: _Reading) -> HttpResponseBase:
        token = _reading.set(state)

        def on_primary(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
            if not state.wrote and _is_write(sql):
                state.wrote = True
            return execute(sql, params, many, context)

        def on_replica(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
            try:
                return execute(sql, params, many, context)
            except (OperationalError, InterfaceError):
                state.replica_failed = True
                health.mark_down()
                raise

        try:
            with connections[DEFAULT_DB_ALIAS].execute_wrapper(on_primary), \
                    connections[REPLICA_ALIAS].execute_wrapper(on_replica):
                return self.get_response(request)
        finally:
            _reading.reset(token)

    def process_view(self, request: HttpRequest, view: Callable[..., Any], args: Any, kwargs: Any) -> None:
        state = _reading.get()
        if state is None or state.replica_failed:
            return None
        view_class = getattr(view, "cls", None)
        state.allowed = request.method in SAFE_METHODS or bool(getattr(view_class, "reads_only", False))
        state.can_retry = request.method in SAFE_METHODS
        if state.allowed and not state.can_retry:
            try:
                request.body  # noqa: B018  (read now and kept, so a second run can read it again)
                state.can_retry = True
            except Exception:  # too large to keep, or already streamed: no second run
                pass
        return None

    @staticmethod
    def _remember_write(client: str) -> None:
        try:
            with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
                cursor.execute("SELECT pg_current_wal_lsn()::text")
                position = lsn_value(cursor.fetchone()[0])
        except (OperationalError, InterfaceError):
            return  # the primary is gone: the response already says so
        cache.set(client, position, timeout=settings.SAM_REPLICA_STICKY_SECONDS)
