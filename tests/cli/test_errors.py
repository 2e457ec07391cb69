"""What the command line says when something is wrong: one line on stderr, the user's own words (flags, not
Python keywords), exit 2 for bad input."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest


def _cli(args: list[str], *, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fastbertscore.cli.main", *args], input=stdin, capture_output=True,
                          text=True, timeout=120, env=env)


@pytest.fixture()
def refused_endpoint():
    """A Hub endpoint on 127.0.0.1 that refuses every connection: a port bound (so nothing else takes it) and
    never listened on. The same answer as no network, at once and every time."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize(
    "args, model",
    [
        (["-m", "acme/no-such-model"], "acme/no-such-model"),
        (["--lang", "en", "--rescale_with_baseline"], "roberta-large"),  # the default model for en, not cached here
    ],
)
def test_a_model_the_hub_cannot_be_asked_for_fails_in_one_line(tmp_path, refused_endpoint, args, model):
    # Not offline: huggingface_hub retried each of two files five times with backoff (49 s, 46 lines on stderr).
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_ENDPOINT=refused_endpoint, HF_HOME=str(tmp_path / "hf"), HF_HUB_CACHE=str(tmp_path / "hf" / "hub"))
    (tmp_path / "c.txt").write_text("a cat\n", encoding="utf-8")
    done = _cli(["-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "c.txt"), *args], env=env)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(err) == 1, done.stderr  # no retry lines: the Hub is asked once
    assert err[0].startswith(f"bertscore: error: could not load the tokenizer of model_type='{model}': ")
    assert f"the Hub cannot be reached ({refused_endpoint}: " in err[0]
