"""Child processes that meet the file system as an ordinary user, or a full disk, would: even when the tests run
as root, whom file modes do not stop.

- ``as_ordinary_user``: on Linux as root, the child drops from its capability bounding set the powers that let
  root read, write and chmod any file (``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``, ``CAP_FOWNER``) before it
  starts Python; a folder of mode 0555 is then read-only to it, and a file of mode 0600 owned by another user
  unreadable, exactly as for anyone else. Not root: the child is an ordinary user already.
- ``max_file_bytes``: once the child's code calls ``confine()``, it may write files up to that size
  (``RLIMIT_FSIZE``): a write past it fails with ``EFBIG``, as on a full disk (``SIGXFSZ``, which would kill
  it, is ignored).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import pytest

_PR_CAPBSET_DROP = 24
_FILE_POWERS = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER

#: The first lines of a confined child's code: ``confine()``, which the code calls where the full disk should
#: begin (after its imports and model loads: libraries probe the temporary folder by writing to it).
_PRELUDE = """
import resource, signal, sys, tempfile
_limit = sys.argv.pop(1)
def confine():
    if _limit:
        tempfile.gettempdir()  # found once, while it can still be written to
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(_limit), resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
"""


def _drop_file_powers() -> None:
    """Runs in the child between fork and exec: what it drops, the new program never gets back."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in _FILE_POWERS:
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_confined(
    code: str, *args: str, as_ordinary_user: bool = False, max_file_bytes: int | None = None
) -> tuple[dict, str]:
    """Run ``code`` (``sys.argv[1:]`` is ``args``) in a fresh interpreter; its last stdout line as JSON, and its
    stderr. Skips where the platform cannot confine it so."""
    if not sys.platform.startswith("linux"):
        pytest.skip("confining a child process needs Linux (prctl, RLIMIT_FSIZE)")
    drop = as_ordinary_user and os.geteuid() == 0
    argv = [sys.executable, "-c", _PRELUDE + code, "" if max_file_bytes is None else str(max_file_bytes), *args]
    try:
        result = subprocess.run(
            argv,
            check=False,
            preexec_fn=_drop_file_powers if drop else None,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.SubprocessError as error:  # the drop itself failed (no CAP_SETPCAP in this container)
        pytest.skip(f"cannot drop root's file powers here: {error}")
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr
