"""Load a demo coding session into the demo `webshop` space. Idempotent: the session is
resumed by its key and its events by their ids, so a second run adds nothing."""

from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.management.base import BaseCommand

from core.models import Space
from governance.access import SYSTEM
from prd.sessions import services as sessions

SPACE = "webshop"
START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
# (event_id, event_type, text, data, role)
EVENTS: list[tuple[str, str, str, dict[str, Any], str]] = [
    ("d1", "chat_turn", "Add partial refunds to the checkout", {}, "user"),
    ("d2", "decision", "Refunds go through the payments service, not the shop",
     {"reason": "one place talks to Stripe"}, ""),
    ("d3", "test_result", "test_partial_refund: AssertionError 10.00 != 9.99",
     {"name": "test_partial_refund", "status": "failed"}, ""),
    ("d4", "file_change", "", {"path": "shop/refunds.py", "change": "modified"}, ""),
    ("d5", "test_result", "", {"name": "test_partial_refund", "status": "passed"}, ""),
    ("d6", "command_run", "", {"command": "pytest tests/refunds", "exit_code": 0}, ""),
    ("d7", "command_run", "", {"command": "pytest tests/refunds", "exit_code": 0}, ""),
    ("d8", "handoff", "Partial refunds work end to end; the refund webhook is next",
     {"next_steps": ["Handle the refund.updated webhook"],
      "open_questions": ["Do refunds over 500 EUR need a second approval?"]}, ""),
]


class Command(BaseCommand):
    help = "Load a demo coding session (events, cards, a handoff) into the demo webshop space."

    def handle(self, *args, **options) -> None:
        if not Space.objects.filter(slug=SPACE).exists():
            self.stdout.write("demo session: no webshop space (load sam_demo first)")
            return
        started = sessions.session_start(actor=SYSTEM, space=SPACE, key="demo-refunds",
                                         title="Partial refunds", agent_id="claude-code")
        events = [sessions.EventInput(event_id=event_id, event_type=kind, text=text, data=data, role=role,
                                      ts=START + timedelta(minutes=5 * n))
                  for n, (event_id, kind, text, data, role) in enumerate(EVENTS)]
        appended = sessions.events_append(actor=SYSTEM, session_id=started.session.id, events=events)
        self.stdout.write(f"demo session: {appended.created} events added, "
                          f"{len(events) - appended.created} already present")
