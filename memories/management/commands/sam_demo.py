"""Load the demo spaces and memories. Idempotent: memories already there are skipped."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from core.models import Space
from governance import spaces as space_services
from governance.access import SYSTEM
from memories import services
from memories.models import Memory

DEMO_FILE = Path(__file__).resolve().parents[2] / "demo" / "demo_memories.json"


class Command(BaseCommand):
    help = "Load demo spaces and memories (skips those already loaded)."

    def handle(self, *args, **options) -> None:
        demo = json.loads(DEMO_FILE.read_text())
        for space in demo["spaces"]:
            if not Space.objects.filter(slug=space["slug"]).exists():
                space_services.space_create(actor=SYSTEM, **space)
        existing = set(Memory.objects.values_list("space__slug", "title"))
        fresh = [m for m in demo["memories"] if (m["space"], m["title"]) not in existing]
        result = services.memory_bulk_create(actor=SYSTEM, items=fresh, atomic=True)
        for row in result.failed:
            self.stderr.write(f"demo memory {row.index} invalid: {row.errors}")
        self.stdout.write(f"demo data: {len(result.created)} memories added, "
                          f"{len(demo['memories']) - len(fresh)} already present")
