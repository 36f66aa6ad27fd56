"""Key management: status, new master key lines, re-wrap, data-key rotation, re-encryption.

    manage.py sam_keys status
    manage.py sam_keys new-master-key ID      # prints a line for SAM_MASTER_KEYS
    manage.py sam_keys rewrap                 # every data key under the primary master key
    manage.py sam_keys rotate --space SLUG    # (or --all) new data keys; old ones retire
    manage.py sam_keys reencrypt              # re-seal with active keys, destroy unused retired keys

Every step is resumable: run it again after an interruption.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count

from core.models import Space
from governance.crypto import keyring, rotation
from governance.models import DataKey


class Command(BaseCommand):
    help = "Inspect and rotate the keys that encrypt SAM's data at rest."

    def add_arguments(self, parser) -> None:
        sub = parser.add_subparsers(dest="step", required=True)
        sub.add_parser("status", help="Master keys configured and data keys in use")
        new = sub.add_parser("new-master-key", help="Print a fresh master key line")
        new.add_argument("key_id")
        sub.add_parser("rewrap", help="Wrap every data key under the primary master key")
        rotate = sub.add_parser("rotate", help="Give spaces new data keys")
        target = rotate.add_mutually_exclusive_group(required=True)
        target.add_argument("--space", help="Slug of one space")
        target.add_argument("--all", action="store_true", help="Every space and the system key")
        reencrypt = sub.add_parser("reencrypt", help="Re-seal values held by retired data keys")
        reencrypt.add_argument("--batch", type=int, default=200)

    def handle(self, *args, step: str, **options) -> None:
        getattr(self, "step_" + step.replace("-", "_"))(**options)

    def step_status(self, **_) -> None:
        keys = keyring.master_keys()
        self.stdout.write(f"master keys: {', '.join(k.key_id for k in keys)} (primary: {keys[0].key_id})")
        rows = (DataKey.objects.values("master_key_id", "state").annotate(n=Count("id"))
                .order_by("master_key_id", "state"))
        for row in rows:
            known = "" if keyring.by_id(row["master_key_id"]) else "  <- master key NOT configured"
            self.stdout.write(f"  {row['n']:6d} {row['state']:8s} data keys wrapped by "
                              f"'{row['master_key_id']}'{known}")

    def step_new_master_key(self, key_id: str, **_) -> None:
        self.stdout.write(keyring.new_key_line(key_id))
        self.stderr.write("Put this line FIRST in SAM_MASTER_KEYS (keep the old keys after it), "
                          "restart SAM, then run `sam_keys rewrap`.")

    def step_rewrap(self, **_) -> None:
        moved = rotation.rewrap(progress=self.stdout.write)
        self.stdout.write(self.style.SUCCESS(
            f"{moved} data keys re-wrapped under '{keyring.primary().key_id}'. Keys no data key "
            "names in `sam_keys status` can now be removed from the configuration."))

    def step_rotate(self, space: str | None = None, all: bool = False, **_) -> None:
        if space:
            found = Space.objects.filter(slug=space).first()
            if found is None:
                raise CommandError(f"No space '{space}'.")
            targets: list[int | None] = [found.pk]
        else:
            targets = [*Space.objects.values_list("pk", flat=True), None]
        for space_id in targets:
            new_id = rotation.rotate_data_key(space_id)
            self.stdout.write(f"space {space_id or 'system'}: new data key {new_id}")
        self.stdout.write(self.style.SUCCESS("Rotated. Run `sam_keys reencrypt` to move old values."))

    def step_reencrypt(self, batch: int, **_) -> None:
        report = rotation.reencrypt(batch=batch, progress=self.stdout.write)
        for label, count in report.rows.items():
            self.stdout.write(f"{label}: {count} rows re-encrypted")
        self.stdout.write(f"destroyed retired data keys: {report.destroyed or 'none'}")
        if report.kept:
            self.stdout.write(f"kept retired data keys {report.kept}: the append-only audit log "
                              "holds values they sealed")
        self.stdout.write(self.style.SUCCESS("Re-encryption complete."))
