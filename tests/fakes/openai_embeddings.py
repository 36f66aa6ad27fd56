"""A local stand-in for an OpenAI-compatible /embeddings endpoint (hosted APIs are out of reach).

Serves deterministic vectors derived from each input's hash, and can be told to fail
the next N requests, to exercise retries, or to take its time, to keep a batch in flight.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np


def fake_vector(text: str, dims: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    vector = np.random.default_rng(seed).standard_normal(dims)
    return (vector / np.linalg.norm(vector)).round(6).tolist()


class FakeEmbeddingServer:
    def __init__(self, *, dims: int = 384) -> None:
        self.dims = dims
        self.fail_next = 0
        self.delay_seconds = 0.0
        self.requests: list[dict] = []
        # (Authorization header, inputs) of each request answered with vectors.
        self.answered: list[tuple[str | None, list[str]]] = []
        self.auth_headers: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.auth_headers.append(self.headers.get("Authorization"))
                if self.path != "/v1/embeddings":
                    self._answer(404, {"error": "not found"})
                elif server.fail_next > 0:
                    server.fail_next -= 1
                    self._answer(503, {"error": "overloaded"})
                else:
                    time.sleep(server.delay_seconds)
                    data = [{"index": i, "embedding": fake_vector(t, server.dims)}
                            for i, t in enumerate(body["input"])]
                    self._answer(200, {"data": data, "model": body["model"]})
                    server.answered.append((self.headers.get("Authorization"), list(body["input"])))

            def _answer(self, status: int, payload: dict) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeEmbeddingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
