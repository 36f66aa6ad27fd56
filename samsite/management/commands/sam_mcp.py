"""`manage.py sam_mcp --token sam_…`: SAM's MCP server over stdio, for Claude Code, Cursor,
Claude Desktop and any client that starts a server as a subprocess.

Every tool call is made with the given token (or SAM_MCP_TOKEN), so the token's scope
and role cap limit what the agent sees and does. Nothing but MCP messages goes to stdout;
logs go to stderr.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from rest_framework import exceptions

from governance.authentication import authenticate_header
from memories.embeddings.worker_threads import limit_web_threads
from samsite.mcp.dispatch import Caller
from samsite.mcp.server import build_server


class Command(BaseCommand):
    help = "Serve SAM's MCP tools over stdio, acting with one agent token."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--token", default=os.environ.get("SAM_MCP_TOKEN", ""),
                            help="A SAM agent token (default: $SAM_MCP_TOKEN). Prefer the variable: "
                                 "a command line is visible to other users of the machine.")

    def handle(self, *args: Any, **options: Any) -> None:
        token = options["token"].strip()
        if not token:
            raise CommandError("Give a SAM agent token: --token or SAM_MCP_TOKEN (manage.py sam_token).")
        authorization = f"Bearer {token}"
        try:
            found = authenticate_header(authorization.encode())
        except exceptions.AuthenticationFailed as exc:
            raise CommandError(f"The token was refused: {exc.detail}") from None
        if found is None:
            raise CommandError("The token was refused.")
        # stdout carries the protocol: every log line goes to stderr.
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, force=True)
        # Sized as a web process's is: numpy's default pool spins a thread per core around
        # each query embedding, which cost this server about twice a web worker's CPU per recall.
        limit_web_threads(force=False)
        caller = Caller(authorization=authorization, secure=bool(settings.SECURE_SSL_REDIRECT))
        build_server(default_caller=caller).run("stdio")
