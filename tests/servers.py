"""Helpers for tests that start real servers on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float, what: str) -> None:
    """Return once ``port`` accepts connections; raise if ``process`` exits or ``timeout`` passes first."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with code {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f} s")
