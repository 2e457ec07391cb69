"""Helpers for tests that start real servers on 127.0.0.1."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from pathlib import Path


def unused_port() -> int:
    """A port nothing listened on a moment ago. Only for servers that must be told a port (olah): the caller
    checks that its own server answers there and starts it again on another port if not."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(ready, process: subprocess.Popen, timeout: float, what: str):
    """Poll ``ready()`` until it returns something truthy (returned); raise if ``process`` exits or ``timeout``
    passes first. The state is polled, so the wait is as short as the server allows."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerExited(f"{what} exited with code {process.returncode} before it was ready")
        result = ready()
        if result:
            return result
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{what} was not ready within {timeout:.0f} s")


class ServerExited(RuntimeError):
    """The server process ended before it was ready (for olah: usually its port was taken meanwhile)."""


def url_in_log(log: Path, pattern: str) -> str | None:
    """The first URL matching ``pattern`` that a server wrote to its log: the port it really bound."""
    match = re.search(pattern, log.read_text(errors="replace")) if log.exists() else None
    return match.group(0) if match else None


class FlakyProxy:
    """An HTTP proxy in front of a real server that can fail the way networks do.

    With ``cut_next_download`` set, the next ``GET .../resolve/...`` gets its headers and half of its body,
    then the connection drops and the proxy stops listening, like a server dying mid-download; ``start()``
    brings it back on the same port.
    """

    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.port = 0  # bound on start(); restarts reuse the port it got
        self.cut_next_download = False
        self.cut_bytes: tuple[int, int] | None = None  # (sent, total) of the download that was cut
        self._server = None

    def start(self) -> FlakyProxy:
        import http.client
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                self._forward()

            def do_GET(self):
                self._forward()

            def _forward(self):
                if proxy._server is None:  # stopped: kept-alive connections die with it
                    self.close_connection = True
                    return
                upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                upstream.request(self.command, self.path, headers=headers)
                response = upstream.getresponse()
                body = response.read()
                upstream.close()
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                length = response.getheader("content-length") if self.command == "HEAD" else str(len(body))
                if length is not None:
                    self.send_header("Content-Length", length)
                self.end_headers()
                if self.command == "HEAD":
                    return
                if proxy.cut_next_download and "/resolve/" in self.path and len(body) > 1:
                    proxy.cut_next_download = False
                    proxy.cut_bytes = (len(body) // 2, len(body))
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    threading.Thread(target=proxy.stop, daemon=True).start()
                    return
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self._server.server_address[1]
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
