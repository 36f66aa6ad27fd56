"""Errors of field encryption. They are loud on purpose: a wrong or missing key must
stop the request, never hand back garbage."""


class CryptoError(Exception):
    pass


class KeyMissing(CryptoError):
    """A master key needed to unwrap a data key is not configured, or is the wrong key."""


class KeyDestroyed(CryptoError):
    """The data key was destroyed (crypto-shredded); what it sealed is gone for good."""


class Tampered(CryptoError):
    """A sealed value failed authentication: it was altered or moved to another column."""

