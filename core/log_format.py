"""Logs as one JSON object a line (SAM_LOG_FORMAT=json, the default; settings LOGGING).

Each line carries the request (or job) id it belongs to, added by
governance.audit.request_id.RequestIdFilter: the id the audit log records, so a log line
and an audit event of one request can be joined. SAM's own messages carry ids and counts,
never memory text, tokens or keys (tests/test_logging.py holds them to it).
"""

from __future__ import annotations

import logging
from typing import Any

from pythonjsonlogger.json import JsonFormatter


class SamJsonFormatter(JsonFormatter):
    """python-json-logger's formatter without the request object Django attaches to its
    records: its text is the full path, query string included (which may hold a search)."""

    def add_fields(self, log_data: dict[str, Any], record: logging.LogRecord,
                   message_dict: dict[str, Any]) -> None:
        super().add_fields(log_data, record, message_dict)
        log_data.pop("request", None)
