"""Sealed model fields. They are defined in samsite.core.sealing (the Space model has one);
this name stays because migrations import the fields from here."""

from samsite.core.sealing import Sealed, SealedJSONField, SealedTextField, _SealedField

__all__ = ["Sealed", "SealedJSONField", "SealedTextField", "_SealedField"]
