"""The tamper-evident audit log: append-only, hash-chained events, verified by a command."""
