"""Model fields whose values are sealed in the database and plain in Python.

The model says which space's key seals a row by defining `sealing_space_id()`; the field
seals in pre_save, where the instance is known. Writes that bypass save() (update(),
bulk_update()) have no instance to ask, so they fail loudly instead of storing
plaintext. Sealed columns cannot be filtered or ordered on in SQL; search goes through
governance.crypto.search.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.utils.text import capfirst

from governance.crypto import cipher


class Sealed(bytes):
    """Bytes already sealed for storage (what pre_save hands the database layer)."""


class _SealedField(models.Field):
    description = "A value encrypted at rest with the row's space key"

    def db_type(self, connection) -> str:
        return "bytea"

    @property
    def context(self) -> str:
        return f"{self.model._meta.db_table}.{self.column}"

    def encode(self, value: Any) -> bytes:
        raise NotImplementedError

    def decode(self, raw: bytes) -> Any:
        raise NotImplementedError

    def pre_save(self, model_instance, add: bool) -> Any:
        value = getattr(model_instance, self.attname)
        if value is None:
            return None
        space_id = model_instance.sealing_space_id()
        return Sealed(cipher.seal_bytes(space_id, self.encode(value), context=self.context))

    def get_db_prep_value(self, value, connection, prepared: bool = False):
        if value is None or isinstance(value, Sealed):
            return None if value is None else bytes(value)
        raise ImproperlyConfigured(
            f"{self.context} is sealed per row; write it through Model.save() or "
            "bulk_create(), not update() or a filter."
        )

    def from_db_value(self, value, expression, connection) -> Any:
        if value is None:
            return None
        return self.decode(cipher.open_bytes(value, context=self.context))

    def to_python(self, value: Any) -> Any:
        return value

    def value_to_string(self, obj) -> str:
        return json.dumps(self.value_from_object(obj), default=str)


class SealedTextField(_SealedField):
    def encode(self, value: Any) -> bytes:
        return str(value).encode()

    def decode(self, raw: bytes) -> str:
        return raw.decode()

    def formfield(self, **kwargs):
        return forms.CharField(**{"required": not self.blank, "widget": forms.Textarea,
                                  "label": capfirst(self.verbose_name), **kwargs})

    def value_to_string(self, obj) -> str:
        return self.value_from_object(obj) or ""


class SealedJSONField(_SealedField):
    def encode(self, value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str).encode()

    def decode(self, raw: bytes) -> Any:
        return json.loads(raw)

    def formfield(self, **kwargs):
        return forms.JSONField(**{"required": not self.blank, "label": capfirst(self.verbose_name),
                                  **kwargs})
