"""Every column that can hold text is classified (samsite.stored_text), and the docs agree.

The columns come from the models of every installed app (Django's, django-q2's and
guardian's too): any concrete field that is not a number, a flag, a time or a key to another
row. A new field fails here until it has an entry; an entry whose column is gone fails too.
"""

from __future__ import annotations

import re
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.db import models

from core.sealing import _SealedField
from samsite.stored_text import COLUMNS, KEYED, PLAIN, SAM_APPS, SEALED, plain_columns

# Field types that hold no text: numbers, flags, times, ids and links to other rows.
NOT_TEXT = (models.AutoField, models.BigAutoField, models.SmallAutoField, models.IntegerField,
            models.FloatField, models.DecimalField, models.BooleanField, models.DateTimeField,
            models.DateField, models.TimeField, models.DurationField, models.UUIDField,
            models.ForeignKey)
SECURITY_DOC = Path(settings.BASE_DIR) / "docs" / "security.md"


def text_columns() -> dict[str, tuple[str, models.Field]]:
    """`table.column` -> (app label, field) of every stored column that can hold text."""
    found = {}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.proxy or not model._meta.managed:
            continue
        for field in model._meta.concrete_fields:
            if isinstance(field, NOT_TEXT) and not isinstance(field, _SealedField):
                continue
            found[f"{model._meta.db_table}.{field.column}"] = (model._meta.app_label, field)
    return found


def documented(heading: str) -> set[str]:
    text = SECURITY_DOC.read_text()
    assert heading in text, f"docs/security.md has no '{heading}' section"
    section = text.split(heading, 1)[1].split("\n#", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \|", section, re.MULTILINE))


def test_every_text_column_of_every_model_is_classified_and_every_entry_still_exists():
    # Given every column of every installed model that can hold text
    columns = text_columns()

    # Then each has an entry, and each entry names a column that exists
    missing = sorted(set(columns) - set(COLUMNS))
    assert not missing, f"classify these in samsite/stored_text.py (sealed, keyed or plain): {missing}"
    gone = sorted(set(COLUMNS) - set(columns))
    assert not gone, f"samsite/stored_text.py names columns no model has: {gone}"


def test_each_entry_says_how_and_a_plain_one_why():
    for column, stored in COLUMNS.items():
        assert stored.how in (SEALED, KEYED, PLAIN), column
        if stored.how != SEALED:
            assert stored.why.strip(), f"{column}: a {stored.how} column says why"
        assert stored.how == PLAIN or not stored.client, f"{column}: only a plain column is a client's label"


def test_a_column_classified_sealed_is_a_sealed_field_and_a_sealed_field_is_classified_sealed():
    for column, (_, field) in text_columns().items():
        is_sealed_field = isinstance(field, _SealedField)
        if is_sealed_field:
            assert COLUMNS[column].how == SEALED, f"{column} is a sealed field"
        elif COLUMNS[column].how == SEALED:
            # Sealed by hand (the audit payload, wrapped keys): bytes, never text.
            assert isinstance(field, models.BinaryField), f"{column} is classified sealed but stored as it is"


def test_the_plaintext_tables_of_docs_security_md_list_exactly_the_plain_columns():
    # Given the plain columns of SAM's own apps (and every column a client writes plain)
    columns = text_columns()
    of_clients = plain_columns(client=True)
    sams_own = {c for c in plain_columns(client=False) if columns[c][0] in SAM_APPS}

    # Then docs/security.md lists the clients' ones in its plaintext table...
    listed = documented("### What is stored in plaintext")
    assert listed == of_clients, (f"missing from the table: {sorted(of_clients - listed)}; "
                                  f"listed but not plain labels: {sorted(listed - of_clients)}")
    # ...and SAM's own values in the table after it
    listed = documented("#### Values SAM writes itself")
    assert listed == sams_own, (f"missing from the table: {sorted(sams_own - listed)}; "
                                f"listed but not SAM's plain values: {sorted(listed - sams_own)}")
