"""Issue an API token: `manage.py sam_token --user alice [--name laptop] [--expires-days 90]`."""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from governance.services import api_token_issue


class Command(BaseCommand):
    help = "Issue an API token for a user and print it once (only its hash is stored)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--user", required=True, help="Username the token acts as.")
        parser.add_argument("--name", default="cli", help="A label to tell tokens apart.")
        parser.add_argument("--expires-days", type=int, default=None,
                            help="Days until the token stops working (default: never).")
        parser.add_argument("--create-user", action="store_true",
                            help="Create the user (without a password) if missing, e.g. for an agent.")

    def handle(self, *args, user: str, name: str, expires_days: int | None, create_user: bool,
               **options) -> None:
        User = get_user_model()
        account = User.objects.filter(username=user).first()
        if account is None:
            if not create_user:
                raise CommandError(f"No user '{user}' (pass --create-user to create one).")
            account = User.objects.create_user(username=user)
            account.set_unusable_password()
            account.save(update_fields=["password"])
        expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
        _, raw = api_token_issue(user=account, name=name, expires_at=expires_at)
        self.stdout.write(raw)
