"""Errors of field encryption, defined with the other domain errors in samsite.core.errors
so the API layer can map them without importing governance."""

from samsite.core.errors import CryptoError, KeyDestroyed, KeyMissing, Tampered

__all__ = ["CryptoError", "KeyDestroyed", "KeyMissing", "Tampered"]
