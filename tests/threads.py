"""Running test work on another thread, with its own database connection."""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.db import connection


def in_thread(work: Callable[[], None], errors: list[BaseException]) -> threading.Thread:
    """Start `work` on a new thread; anything it raises lands in `errors`."""

    def run() -> None:
        try:
            work()
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()  # each thread has its own connection

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def assert_second_waits(first: Callable[[], None], second: Callable[[], None], *,
                        second_done: threading.Event, release: threading.Event,
                        timeout: float = 60) -> None:
    """Run `first` and `second` on two threads and check that `second` cannot finish
    while `first` holds what it holds (until `release` is set); both must end cleanly."""
    errors: list[BaseException] = []
    threads = [in_thread(first, errors), in_thread(second, errors)]
    assert not second_done.wait(timeout=1.0)
    release.set()
    for thread in threads:
        thread.join(timeout=timeout)
    assert errors == []
