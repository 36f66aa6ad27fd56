"""Manage the embedded Postgres: `manage.py sam_db status|start|stop|url`."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core import embedded_db


class Command(BaseCommand):
    help = "Start, stop or inspect the embedded Postgres server under var/pgdata."

    def add_arguments(self, parser) -> None:
        parser.add_argument("action", choices=["status", "start", "stop", "url"])

    def handle(self, *args, action: str, **options) -> None:
        data_dir = settings.SAM_EMBEDDED_DB_DIR
        if data_dir is None:
            raise CommandError("DATABASE_URL is set: SAM uses an external Postgres.")
        if action == "stop":
            stopped = embedded_db.stop(data_dir)
            self.stdout.write("stopped" if stopped else "not running")
        elif action == "start":
            embedded_db.ensure_running(data_dir)
            self.stdout.write("running")
        elif action == "url":
            server = embedded_db.server_for(data_dir)
            db = settings.DATABASES["default"]
            self.stdout.write(f"postgresql://{db['USER']}@/{db['NAME']}?host={server.socket_dir}&port={server.port}")
        else:
            self.stdout.write("running" if embedded_db.is_running(data_dir) else "not running")
