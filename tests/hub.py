"""A Hub-compatible dataset repo on 127.0.0.1: olah serving a git repository built from a dict of files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from servers import ServerExited, unused_port, wait_until


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.org", "-c", "user.name=test", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def serve_dataset_repo(root: Path, repo_id: str, files: dict[str, str], repo_type: str = "datasets"):
    """Start olah over a one-commit repo (a dataset, or ``repo_type="spaces"``) holding ``files``; yield its port,
    stop it afterwards."""
    if shutil.which("olah-cli") is None:
        pytest.skip("olah is not installed (pip install -r requirements-test.txt)")
    repo = root / "mirrors" / repo_type / repo_id
    for relpath, text in files.items():
        (repo / relpath).parent.mkdir(parents=True, exist_ok=True)
        (repo / relpath).write_text(text)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "baselines")
    relpath, text = next(iter(files.items()))
    prefix = "" if repo_type == "models" else f"/{repo_type}"
    for _ in range(3):
        port = unused_port()
        config = root / "olah.toml"
        config.write_text(
            f'[basic]\nhost = "127.0.0.1"\nport = {port}\nmirrors-path = ["{root / "mirrors"}"]\n'
            f'repos-path = "{root / "repos"}"\n[accessibility]\noffline = true\n'
        )
        server = subprocess.Popen(
            ["olah-cli", "-c", str(config)], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        url = f"http://127.0.0.1:{port}{prefix}/{repo_id}/resolve/main/{relpath}"
        try:
            # Ready when *this* olah serves the repo's first file there (another server that took the port
            # meanwhile cannot), so a lost race for the port means another try, never a wrong answer.
            wait_until(lambda url=url: _body(url) == text, server, 30, "olah")
            break
        except ServerExited:
            continue
        except RuntimeError as error:
            pytest.fail(str(error))
    else:
        pytest.fail("olah could not start on any of 3 ports")
    try:
        yield port
    finally:
        server.terminate()
        server.wait(timeout=10)


def _body(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode("utf-8", errors="replace")
    except OSError:
        return None


def run_python(code: str, env_extra: dict, *, check: bool = True) -> tuple[dict, str]:
    """Run ``code`` in a fresh interpreter (huggingface_hub reads HF_ENDPOINT at import); return its last
    stdout line as JSON, and its stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(env_extra)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    if check:
        assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


FIND_BASELINE = """
import json, fastbertscore.baselines.lookup as s
from fastbertscore.baselines.table import BaselineError
try:
    path, source = s.find_baseline({lang!r}, {model!r})
    print(json.dumps({{"path": str(path), "source": source, "text": open(path).read()}}))
except BaselineError as e:
    print(json.dumps({{"error": str(e)}}))
"""
