"""Errors of field encryption, defined with the other domain errors in core.errors
so the API layer can map them without importing governance."""

from core.errors import CryptoError, KeyDestroyed, KeyMissing, Tampered

__all__ = ["CryptoError", "KeyDestroyed", "KeyMissing", "Tampered"]
