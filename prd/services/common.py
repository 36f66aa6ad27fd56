"""What every PRD write shares: input cleaning and its redaction report, the memory mode's
answer, job queueing, and a formation lock."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db import connection

from core import jobs
from core.actor import Actor
from core.errors import Conflict, InvalidInput
from governance import policy, privacy
from governance.modes import WriteOutcome

# Looked up through the module at call time, so a test can swap the provider.
from memories.normalize import clean_content, clean_line
from prd import thoughts
from prd.progress import TransitionRefused

logger = logging.getLogger(__name__)


def invalid(field_name: str, message: str) -> InvalidInput:
    return InvalidInput(message, fields={field_name: [message]})


def refused(exc: TransitionRefused | thoughts.ThoughtRefused) -> Exception:
    fields = {exc.field: [exc.message]}
    return Conflict(exc.message, fields=fields) if exc.conflict else InvalidInput(exc.message, fields=fields)


# Redactions made while a service call cleans its input (every storage-bound text of
# the PRD app passes through text() or redact()), reported back on the write's answer.
_redactions: ContextVar[list[dict[str, Any]] | None] = ContextVar("prd_redactions", default=None)


def redact(value: Any, *, path: str) -> Any:
    report = _redactions.get()
    return privacy.redact_value(value, path=path, report=report if report is not None else [])


@contextmanager
def collecting_redactions() -> Iterator[list[dict[str, Any]]]:
    report: list[dict[str, Any]] = []
    token = _redactions.set(report)
    try:
        yield report
    finally:
        _redactions.reset(token)


def writable(actor: Actor, space) -> WriteOutcome:
    """The memory mode's answer for a write (409 when paused or off)."""
    return policy.write_outcome(actor, space)


def text(value: str, *, field_name: str, bounds: tuple[int, int], multiline: bool = True) -> str:
    cleaned = redact(clean_content(value) if multiline else clean_line(value), path=field_name)
    low, high = bounds
    if len(cleaned) < low:
        raise invalid(field_name, "This field may not be blank." if low == 1 else
                      f"Must be at least {low} characters.")
    if len(cleaned) > high:
        raise invalid(field_name, f"Must be at most {high} characters.")
    return cleaned


def enqueue(func: str, **kwargs: Any) -> None:
    """Run `func` in the worker once this transaction commits (a rollback enqueues nothing)."""
    label = " ".join(f"{v}" for v in kwargs.values())
    jobs.enqueue_on_commit(func, task_name=f"{func.rsplit('.', 1)[-1]} {label}", group="prd", **kwargs)


def schedule_retry(func: str, *, attempt: int, **kwargs: Any) -> None:
    """Try a summary again later, with exponential backoff (the scheduler starts it)."""
    delay = float(settings.SAM_SUMMARIZER["RETRY_BASE_SECONDS"]) * (2 ** (attempt - 1))
    jobs.schedule_retry(func, name=f"prd summary retry {attempt + 1} {next(iter(kwargs.values()))}",
                        kwargs={**kwargs, "attempt": attempt + 1}, delay_seconds=delay)


def advisory_lock(name: str) -> None:
    """Serialise formation of one execution for the rest of this transaction (a lock on a
    name, so it does not hold the execution row that appends need)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])

