"""System checks about the database server, run by `migrate` and `check --database default`.

An external Postgres needs the pgvector extension. The first migration creates it, which only
a superuser may do (the extension is not marked trusted). A role that may not is told so
before any migration runs, with the statement its administrator has to run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.checks import Error, register
from django.db import DatabaseError, connections

MINIMUM_PGVECTOR = (0, 8)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _vector_problem(alias: str) -> Error | None:
    connection = connections[alias]
    if connection.vendor != "postgresql":
        return Error("SAM needs PostgreSQL with the pgvector extension.", id="sam.E010")
    database = connection.settings_dict.get("NAME")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector'),"
            " (SELECT default_version FROM pg_available_extensions WHERE name = 'vector'),"
            " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), current_user")
        installed, available, superuser, role = cursor.fetchone()
    if installed:
        if _version(installed) < MINIMUM_PGVECTOR:
            return Error(
                f'The "vector" extension in database "{database}" is version {installed}; SAM needs '
                f"{'.'.join(map(str, MINIMUM_PGVECTOR))} or newer (iterative index scans).",
                hint=f'As a superuser, in database "{database}": ALTER EXTENSION vector UPDATE;',
                id="sam.E011")
        return None
    if not available:
        return Error(
            "The Postgres server has no pgvector extension installed.",
            hint="Install pgvector 0.8 or newer on the server (https://github.com/pgvector/pgvector), "
                 "use an image that ships it (pgvector/pgvector), or leave DATABASE_URL unset to run "
                 "SAM's embedded Postgres.",
            id="sam.E012")
    if not superuser:
        return Error(
            f'The "vector" extension is not enabled in database "{database}", and role "{role}" '
            "may not create it (only a superuser may).",
            hint=f'Ask the database administrator to run, in database "{database}": '
                 "CREATE EXTENSION vector;  then run migrate again.",
            id="sam.E013")
    return None


@register("database")
def vector_extension(app_configs: Iterable[Any] | None = None, databases: Iterable[str] | None = None,
                     **kwargs: Any) -> list[Error]:
    """Django runs database checks only for the aliases a command names (migrate: its own)."""
    problems = []
    for alias in databases or ():
        if alias != "default":
            continue  # replicas follow the primary, extension included
        try:
            problem = _vector_problem(alias)
        except DatabaseError:
            continue  # an unreachable database is reported by the command itself
        if problem is not None:
            problems.append(problem)
    return problems
