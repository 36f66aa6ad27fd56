"""Model fields whose values are sealed in the database and plain in Python.

The model says which space's key seals a row by defining `sealing_space_id()`; the field
seals in pre_save, where the instance is known. Writes that bypass save() (update(),
bulk_update()) have no instance to ask, so they fail loudly instead of storing
plaintext. Sealed columns cannot be filtered or ordered on in SQL; search goes through
governance.crypto.search.

The fields live here, below every app, because the Space model has one; the cipher that
seals and opens is governance's (governance.crypto.cipher), handed in by `use_cipher()`
when governance's app is ready, so this module imports nothing of the project.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, cast

from django import forms
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.utils.text import capfirst

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper

    _Field = models.Field[Any, Any]
else:
    _Field = models.Field  # not subscriptable at run time


class Cipher(Protocol):
    def seal_bytes(self, space_id: int | None, data: bytes, *, context: str) -> bytes: ...

    def open_bytes(self, raw: bytes, *, context: str) -> bytes: ...


_cipher: Cipher | None = None


def use_cipher(cipher: Cipher) -> None:
    """Install what seals and opens sealed columns (governance does, in its ready())."""
    global _cipher
    _cipher = cipher


def _active_cipher() -> Cipher:
    if _cipher is None:
        raise ImproperlyConfigured("No cipher for sealed fields: is 'governance' installed?")
    return _cipher


class Sealed(bytes):
    """Bytes already sealed for storage (what pre_save hands the database layer)."""


class _SealsPerSpace(Protocol):
    """A model with sealed fields: it says which space's key seals the row."""

    def sealing_space_id(self) -> int | None: ...


class _SealedField(_Field):
    description = "A value encrypted at rest with the row's space key"

    def db_type(self, connection: BaseDatabaseWrapper) -> str:
        return "bytea"

    @property
    def context(self) -> str:
        return f"{self.model._meta.db_table}.{self.column}"

    def encode(self, value: Any) -> bytes:
        raise NotImplementedError

    def decode(self, raw: bytes) -> Any:
        raise NotImplementedError

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        value = getattr(model_instance, self.attname)
        if value is None:
            return None
        space_id = cast(_SealsPerSpace, model_instance).sealing_space_id()
        return Sealed(_active_cipher().seal_bytes(space_id, self.encode(value), context=self.context))

    def get_db_prep_value(self, value: Any, connection: BaseDatabaseWrapper,
                          prepared: bool = False) -> bytes | None:
        if value is None or isinstance(value, Sealed):
            return None if value is None else bytes(value)
        raise ImproperlyConfigured(
            f"{self.context} is sealed per row; write it through Model.save() or "
            "bulk_create(), not update() or a filter."
        )

    def from_db_value(self, value: bytes | None, expression: Any, connection: BaseDatabaseWrapper) -> Any:
        if value is None:
            return None
        return self.decode(_active_cipher().open_bytes(value, context=self.context))

    def to_python(self, value: Any) -> Any:
        return value

    def value_to_string(self, obj: models.Model) -> str:
        return json.dumps(self.value_from_object(obj), default=str)


class SealedTextField(_SealedField):
    def encode(self, value: Any) -> bytes:
        return str(value).encode()

    def decode(self, raw: bytes) -> str:
        return raw.decode()

    # Django's own fields override formfield(**kwargs) too; the stubs spell out its arguments.
    def formfield(self, **kwargs: Any) -> forms.Field:  # type: ignore[override]
        return forms.CharField(**{"required": not self.blank, "widget": forms.Textarea,
                                  "label": capfirst(self.verbose_name), **kwargs})

    def value_to_string(self, obj: models.Model) -> str:
        return self.value_from_object(obj) or ""


class SealedJSONField(_SealedField):
    def encode(self, value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str).encode()

    def decode(self, raw: bytes) -> Any:
        return json.loads(raw)

    # Django's own fields override formfield(**kwargs) too; the stubs spell out its arguments.
    def formfield(self, **kwargs: Any) -> forms.Field:  # type: ignore[override]
        return forms.JSONField(**{"required": not self.blank, "label": capfirst(self.verbose_name),
                                  **kwargs})
