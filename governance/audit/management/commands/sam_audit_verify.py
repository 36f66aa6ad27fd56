"""Verify the audit chain: `manage.py sam_audit_verify [--expect-head HASH]`."""

import re

from django.core.management.base import BaseCommand, CommandError

from governance.audit.verify import audit_chain_verify

HEX64 = re.compile(r"[0-9a-f]{64}")


class Command(BaseCommand):
    help = ("Walk the audit chain in id order and check every event's hash and link. "
            "Exits 0 when intact, 1 naming the first broken link.")

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--expect-head", metavar="HASH", default=None,
            help="A head hash published earlier; fails if it is no longer in the chain "
                 "(the chain alone cannot detect that its newest events were deleted).",
        )

    def handle(self, *args, expect_head: str | None, **options) -> None:
        if expect_head is not None and not HEX64.fullmatch(expect_head):
            raise CommandError("--expect-head takes a 64-character lowercase hex hash.")
        report = audit_chain_verify(expect_head=expect_head)
        if report.broken is not None:
            raise CommandError(f"audit chain broken after {report.events} good events: "
                               f"{report.broken.message}")
        self.stdout.write(f"audit chain intact: {report.events} events, head {report.head}")
