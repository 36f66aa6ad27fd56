"""What happens once memories are written and their text and vector are current.

A batch of memories *settles* when the embedding job has stored their vectors
(memories.tasks.memory_embed) or, for an edit that left the embedded text alone, in the job
the edit queues as it commits (memories.tasks.memories_settle; the services sit below the
steps, which call them, so they queue the step by name). `settle` runs each step in order:

1. the write checks: each new memory against its space's nearest older ones (duplicate,
   supersession, contradiction; memories.lifecycle.write_checks);
2. placing the memories in their space's categories (memories.categories.services);
3. linking them to the people, projects, files and libraries they name
   (memories.entities.linking);
4. a user space over its note cap archives its oldest low and normal notes
   (memories.lifecycle.user_notes);
5. the steps of the apps above memories, which register them in their `ready()` so that
   memories never imports them (recall's training runs for edited memories and its
   word-statistics recount, retrieval.apps). This is the one hook: a lower layer calling
   a higher one.

A step that fails is logged and does not stop the others: what it missed is caught up by
the nightly jobs (write checks of memories left pending, the entity relink, category
placement of the unplaced, the note cap).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from memories.categories import services as categories
from memories.entities import linking as entities
from memories.lifecycle import user_notes, write_checks

logger = logging.getLogger(__name__)

Step = Callable[[list[str]], None]
# Steps of the apps above memories, in the order their apps start (INSTALLED_APPS).
_ABOVE: list[Step] = []


def on_settled(step: Step) -> Step:
    """Register a step of an app above memories (called from its AppConfig.ready())."""
    if step not in _ABOVE:
        _ABOVE.append(step)
    return step


def settle(memory_ids: list[str]) -> None:
    """Run every after-write step on these memories, in order (see the module docstring)."""
    if not memory_ids:
        return
    ids = list(memory_ids)
    _run(write_checks.after_settled, ids)
    _run(categories.place, ids)
    _run(entities.link, ids)
    _run(user_notes.after_settled, ids)
    for step in list(_ABOVE):
        _run(step, ids)


def _run(step: Callable[[list[str]], object], memory_ids: list[str]) -> None:
    try:
        step(list(memory_ids))
    except Exception:
        logger.exception("after-write step %s failed for %d memories",
                         getattr(step, "__qualname__", step), len(memory_ids))
