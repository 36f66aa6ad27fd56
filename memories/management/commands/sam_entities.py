"""Read the names in memories again: after an upgrade to a SAM that keeps entities, or after
a change to the rules that read them (memories/entities/mentions.py)."""

import time

from django.core.management.base import BaseCommand

from governance.access import SYSTEM, access_space
from memories.entities import linking as entities


class Command(BaseCommand):
    help = ("Link every memory (or a space's) to the people, projects, files and libraries it names, "
            "and drop entities no memory names. Safe to run again; memories settled meanwhile link "
            "themselves.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--space", help="Only this space (slug).")

    def handle(self, *args, space: str | None, **options) -> None:
        started = time.perf_counter()
        target = [access_space(SYSTEM, slug=space).pk] if space else None
        links = entities.link_all(space_ids=target)
        dropped = entities.drop_orphans_everywhere()
        self.stdout.write(f"{links} links made, {dropped} entities dropped, "
                          f"{time.perf_counter() - started:.1f} s")
