"""Issue an API token.

    manage.py sam_token --user alice [--name laptop] [--expires-days 90]
    manage.py sam_token --user ci-agent --create-user --space webshop --role contributor
    manage.py sam_token --user alice --name dashboard --scope read

`--space` (repeatable) makes the token work only in those spaces (and in none once they
are all deleted); without it the token works in every space of its user. `--role` caps
what it may do there. A token given --space, or a --role below owner, may not create
spaces. `--scope` (repeatable: read, write; default both) limits the kinds of request:
a token with `--scope read` only reads and recalls. With --create-user and --space, the
new account is also given that role (contributor when no role is named) in each space, as
an agent's service account.
"""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from core.errors import InvalidInput
from core.models import Space
from governance.access import SYSTEM
from governance.roles import Role
from governance.scopes import ALL_SCOPES
from governance.services import membership_grant
from governance.tokens import api_token_issue


class Command(BaseCommand):
    help = "Issue an API token for a user and print it once (only its hash is stored)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--user", required=True, help="Username the token acts as.")
        parser.add_argument("--name", default="cli", help="A label to tell tokens apart.")
        parser.add_argument("--expires-days", type=int, default=None,
                            help="Days until the token stops working (default: never).")
        parser.add_argument("--create-user", action="store_true",
                            help="Create the user (without a password) if missing, e.g. for an agent.")
        parser.add_argument("--space", action="append", default=[],
                            help="Limit the token to this space (repeat for several).")
        parser.add_argument("--role", choices=Role.values, default="",
                            help="Cap the token at this role.")
        parser.add_argument("--scope", action="append", choices=ALL_SCOPES, default=None, dest="scopes",
                            help="A scope of the token (repeat; default: read and write).")

    def handle(self, *args, user: str, name: str, expires_days: int | None, create_user: bool,
               space: list[str], role: str, scopes: list[str] | None, **options) -> None:
        spaces = list(Space.objects.filter(slug__in=space))
        missing = sorted(set(space) - {s.slug for s in spaces})
        if missing:
            raise CommandError(f"No space {', '.join(missing)}.")
        User = get_user_model()
        account = User.objects.filter(username=user).first()
        if account is None:
            if not create_user:
                raise CommandError(f"No user '{user}' (pass --create-user to create one).")
            account = User.objects.create_user(username=user)
            account.set_unusable_password()
            account.save(update_fields=["password"])
            for target in spaces:
                membership_grant(actor=SYSTEM, space=target, user=account, role=role or Role.CONTRIBUTOR)
        expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
        try:
            _, raw = api_token_issue(user=account, name=name, expires_at=expires_at, spaces=spaces, role=role,
                                     scopes=scopes)
        except InvalidInput as refused:
            reasons = [message for messages in refused.fields.values() for message in messages]
            raise CommandError(" ".join(reasons)) from None
        self.stdout.write(raw)
