"""A local stand-in for an OpenAI-compatible /chat/completions endpoint (hosted models are out of reach).

Answers a fixed narrative that quotes the prompt's first heading, and can be told to fail
the next N requests or to answer slower than the client's timeout.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeChatServer:
    def __init__(self) -> None:
        self.fail_next = 0
        self.delay_seconds = 0.0
        # When set, every answer's text (a model judge's JSON, say) instead of the narrative.
        self.reply: str | None = None
        # Answers to give first, one per request, before `reply` (a bad answer, then a good one).
        self.replies: list[str] = []
        self.requests: list[dict] = []
        self.auth_headers: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.auth_headers.append(self.headers.get("Authorization"))
                if server.delay_seconds:
                    time.sleep(server.delay_seconds)
                if self.path != "/v1/chat/completions":
                    self._answer(404, {"error": "not found"})
                elif server.fail_next > 0:
                    server.fail_next -= 1
                    self._answer(503, {"error": "overloaded"})
                else:
                    prompt = body["messages"][-1]["content"]
                    heading = prompt.splitlines()[0].lstrip("# ")
                    text = (server.replies.pop(0) if server.replies else server.reply) or \
                        f"Model narrative of {heading}: work went as logged."
                    self._answer(200, {"choices": [{"index": 0, "message": {"role": "assistant",
                                                                            "content": text}}],
                                       "model": body["model"]})

            def _answer(self, status: int, payload: dict) -> None:
                raw = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and went away

            def log_message(self, *args) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
