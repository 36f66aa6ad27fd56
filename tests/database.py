"""Reaching the suite's database from another process (a cluster, a server, a command)."""

from __future__ import annotations

from urllib.parse import quote

from django.db import connection


def database_url(name: str | None = None, *, user: str | None = None, password: str | None = None) -> str:
    """A DATABASE_URL for the suite's server: its test database, or `name`, as the suite's role
    or `user`. A socket folder (the embedded server) is quoted into the host, as libpq reads it."""
    db = connection.settings_dict
    host = quote(db["HOST"], safe="") if db["HOST"].startswith("/") else db["HOST"]
    secret = password if user else db.get("PASSWORD")
    credentials = f"{user or db['USER']}" + (f":{quote(secret, safe='')}" if secret else "")
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{credentials}@{host}{port}/{name or db['NAME']}"
