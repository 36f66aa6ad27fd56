"""Django's Postgres backend for SAM's embedded server.

The server is found, and started if it is not running, by the first connection a process
opens (core.embedded_db.server_for), not when settings are imported; its socket folder
and port are written into the connection's settings then.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db.backends.postgresql import base

from core import embedded_db


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        server = embedded_db.server_for(Path(self.settings_dict["SAM_DATA_DIR"]))
        self.settings_dict["HOST"] = str(server.socket_dir)
        self.settings_dict["PORT"] = str(server.port)
        return super().get_connection_params()
