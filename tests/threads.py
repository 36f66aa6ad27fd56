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
