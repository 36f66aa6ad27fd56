"""Turning existing plaintext columns into sealed ones, for data migrations.

Used with SeparateDatabaseAndState: the state operations say the field is now sealed,
and seal_columns() does the database side row by row, under each row's space key.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from governance.crypto import cipher

CHUNK = 500


def _as_json(value: Any) -> Any:
    # jsonb may come back as text; arrays come back as lists.
    return json.loads(value) if isinstance(value, str) else value


def _already_sealed(cursor, table: str, column: str) -> bool:
    # The table as the search path finds it (as the ALTERs below do).
    cursor.execute("SELECT atttypid = 'bytea'::regtype FROM pg_attribute "
                   "WHERE attrelid = %s::regclass AND attname = %s AND NOT attisdropped", [table, column])
    row = cursor.fetchone()
    return row is not None and row[0]


def seal_columns(schema_editor, *, table: str, columns: dict[str, str], space_sql: str,
                 join: str = "", pk: str = "id", nullable: tuple[str, ...] = (),
                 clean: dict[str, Callable[[Any, Any], Any]] | None = None) -> None:
    """Replace each column of `table` by its sealed form. `columns` maps name -> "text"|"json";
    `space_sql` selects the sealing space id of a row (NULL for the system key). Columns
    named in `nullable` keep NULL as NULL (and stay nullable). `clean` maps a column to what
    a value goes through before it is sealed (row id and value in, value out). A column
    already sealed (bytea) is left alone, so running it again changes nothing."""
    quote = schema_editor.quote_name
    clean = clean or {}
    with schema_editor.connection.cursor() as cursor:
        columns = {c: kind for c, kind in columns.items() if not _already_sealed(cursor, table, c)}
        if not columns:
            return
        for column in columns:
            cursor.execute(f"ALTER TABLE {quote(table)} ADD COLUMN {quote(column + '__sealed')} bytea")
        names = ", ".join(f"t.{quote(c)}" for c in columns)
        cursor.execute(f"SELECT t.{quote(pk)}, {space_sql}, {names} FROM {quote(table)} t {join}")
        rows = cursor.fetchall()
        assignments = ", ".join(f"{quote(c + '__sealed')} = %s" for c in columns)
        for start in range(0, len(rows), CHUNK):
            params = []
            for row_pk, space_id, *values in rows[start:start + CHUNK]:
                sealed: list[bytes | None] = []
                for (column, kind), value in zip(columns.items(), values, strict=True):
                    context = f"{table}.{column}"
                    if value is None and column in nullable:
                        sealed.append(None)
                        continue
                    value = _as_json(value) if kind == "json" else value or ""
                    if column in clean:
                        value = clean[column](row_pk, value)
                    if kind == "json":
                        sealed.append(cipher.seal_json(space_id, value, context=context))
                    else:
                        sealed.append(cipher.seal_text(space_id, value, context=context))
                params.append([*sealed, row_pk])
            cursor.executemany(f"UPDATE {quote(table)} SET {assignments} WHERE {quote(pk)} = %s", params)
        for column in columns:
            cursor.execute(f"ALTER TABLE {quote(table)} DROP COLUMN {quote(column)}")
            cursor.execute(f"ALTER TABLE {quote(table)} RENAME COLUMN {quote(column + '__sealed')} "
                           f"TO {quote(column)}")
            if column not in nullable:
                cursor.execute(f"ALTER TABLE {quote(table)} ALTER COLUMN {quote(column)} SET NOT NULL")


def open_columns(schema_editor, *, table: str, columns: dict[str, str], pk: str = "id",
                 nullable: tuple[str, ...] = ()) -> None:
    """The reverse of seal_columns: each sealed column of `table` back to plaintext.
    `columns` maps name -> the SQL type to restore ("jsonb" values are JSON). Needs the
    data keys: a value whose key was destroyed cannot be opened, and the reversal stops
    with KeyDestroyed."""
    quote = schema_editor.quote_name
    with schema_editor.connection.cursor() as cursor:
        for column, sql_type in columns.items():
            cursor.execute(f"ALTER TABLE {quote(table)} ADD COLUMN {quote(column + '__plain')} {sql_type}")
        names = ", ".join(quote(c) for c in columns)
        cursor.execute(f"SELECT {quote(pk)}, {names} FROM {quote(table)}")
        rows = cursor.fetchall()
        assignments = ", ".join(f"{quote(c + '__plain')} = %s" for c in columns)
        params = []
        for row_pk, *values in rows:
            opened = []
            for (column, sql_type), value in zip(columns.items(), values, strict=True):
                context = f"{table}.{column}"
                if sql_type == "jsonb":
                    value = cipher.open_json(value, context=context)
                    opened.append(None if value is None else json.dumps(value))
                else:
                    opened.append(cipher.open_text(value, context=context))
            params.append([*opened, row_pk])
        for start in range(0, len(params), CHUNK):
            cursor.executemany(f"UPDATE {quote(table)} SET {assignments} WHERE {quote(pk)} = %s",
                               params[start:start + CHUNK])
        for column in columns:
            cursor.execute(f"ALTER TABLE {quote(table)} DROP COLUMN {quote(column)}")
            cursor.execute(f"ALTER TABLE {quote(table)} RENAME COLUMN {quote(column + '__plain')} "
                           f"TO {quote(column)}")
            if column not in nullable:
                cursor.execute(f"ALTER TABLE {quote(table)} ALTER COLUMN {quote(column)} SET NOT NULL")
