"""Sealed model fields. They are defined in core.sealing (the Space model has one);
this name stays because migrations import the fields from here."""

from core.sealing import Sealed, SealedJSONField, SealedTextField, _SealedField

__all__ = ["Sealed", "SealedJSONField", "SealedTextField", "_SealedField"]
