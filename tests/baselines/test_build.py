"""The baseline builder: deterministic, equal to a direct computation, resumable after a kill."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from paths import REPO
from tiny_models import CORPUS, MAX_LEN
from tolerances import TINY_WIDTH, assert_close, prf_bounds, stored_fp32

import fastbertscore as fb
from fastbertscore.baselines.build import build, read_corpus, sample_pairs
from fastbertscore.baselines.table import read_baseline
from fastbertscore.cli.baseline import main as baseline_main


def _corpus(tmp_path: Path) -> Path:
    words = " ".join(CORPUS).split()
    lines = [" ".join(words[i : i + 3 + i % 5]) for i in range(len(words) - 8)]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines + ["", "   ", lines[0]]) + "\n", encoding="utf-8")  # blanks and a duplicate
    return path


def test_build_is_deterministic_and_equals_a_direct_computation(tiny_model, tmp_path):
    model, corpus = tiny_model("bert"), _corpus(tmp_path)
    kwargs = {"name": "acme/tiny-bert", "pairs": 90, "seed": 3, "block": 40, "verbose": False}
    first = build(model, "en", corpus, tmp_path / "a", **kwargs)
    second = build(model, "en", corpus, tmp_path / "b", **kwargs)
    assert first.read_bytes() == second.read_bytes()
    assert first.relative_to(tmp_path / "a").as_posix() == "en/acme/tiny-bert.tsv"

    sentences = read_corpus(corpus)
    assert len(sentences) == len(set(sentences)) and "" not in sentences
    pairs = sample_pairs(len(sentences), 90, 3)
    assert all(c != r for c, r in pairs)
    P, R, F = fb.score(
        [sentences[c] for c, _ in pairs],
        [sentences[r] for _, r in pairs],
        model_type=model,
        all_layers=True,
        num_layers=4,
    )
    direct = torch.stack([P, R, F], dim=-1).to(torch.float64).mean(dim=1)
    # The builder scores in blocks of 40 pairs, so its means differ from this one run by the fp32 bound at most,
    # plus the rounding of the table's float32 values.
    bounds = prf_bounds(TINY_WIDTH, tokens=MAX_LEN)
    for k, name in enumerate("PRF"):
        assert_close(
            read_baseline(first).double()[:, k], direct[:, k], bounds[k] + stored_fp32(1.0), f"baseline {name}"
        )

    entry = json.loads((tmp_path / "a" / "manifest.json").read_text())["files"]["en/acme/tiny-bert.tsv"]
    assert entry["source"] == "computed" and entry["pairs"] == 90 and entry["seed"] == 3
    assert entry["sentences"] == len(sentences) and entry["max_standard_error_F"] > 0


# The child kills itself with SIGKILL from the checkpoint hook, right after the checkpoint at 150 pairs (the third
# of eight blocks) is on disk: a real kill -9, at a known point, with no polling.
KILLED_AT_150 = """
import os, signal, sys
from fastbertscore.baselines.build import build

def die_at_150(done):
    if done >= 150:
        os.kill(os.getpid(), signal.SIGKILL)

build(sys.argv[1], "en", sys.argv[2], sys.argv[3], name="acme/tiny", pairs=400, block=50, seed=1, verbose=False,
      on_checkpoint=die_at_150)
"""


@pytest.mark.slow
def test_killed_build_resumes_to_the_same_numbers(tiny_model, tmp_path, caplog):
    model, corpus = tiny_model("bert"), _corpus(tmp_path)
    args = [
        "--model",
        model,
        "--name",
        "acme/tiny",
        "--lang",
        "en",
        "--corpus",
        str(corpus),
        "--pairs",
        "400",
        "--block",
        "50",
        "--seed",
        "1",
    ]
    assert baseline_main(["build", *args, "--out", str(tmp_path / "whole")]) == 0  # the uninterrupted build, here

    out = tmp_path / "killed"
    checkpoint = out / ".en__acme__tiny.tsv.checkpoint.json"
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AT_150, model, str(corpus), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert json.loads(checkpoint.read_text())["done"] == 150
    assert not (out / "en" / "acme" / "tiny.tsv").exists()

    # Only the kill needs a process of its own: the command resumes here, from what the killed one left on disk.
    with caplog.at_level(logging.INFO, logger="fastbertscore"):
        assert baseline_main(["build", *args, "--out", str(out)]) == 0
    assert f"resuming from {checkpoint}: 150 pairs done" in caplog.text
    assert (out / "en/acme/tiny.tsv").read_bytes() == (tmp_path / "whole/en/acme/tiny.tsv").read_bytes()
    assert not checkpoint.exists()


def test_push_dry_run_lists_files_without_network(tmp_path, capsys):
    from fastbertscore.cli.baseline import main

    root = REPO / "baselines"
    assert main(["push", "--repo", "acme/baselines", "--root", str(root), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "add en/roberta-large.tsv" in out and "add manifest.json" in out and "add README.md" in out


def test_a_build_never_writes_over_its_corpus(tmp_path):
    corpus = tmp_path / "en" / "acme" / "tiny.tsv"  # where the table of acme/tiny would go
    corpus.parent.mkdir(parents=True)
    corpus.write_text("the cat sat\na dog ran\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"the table {corpus} would overwrite the corpus {corpus}"):
        build("/no/such/model", "en", corpus, tmp_path, name="acme/tiny", pairs=4, verbose=False)  # before any load
    assert corpus.read_text() == "the cat sat\na dog ran\n"


@pytest.mark.parametrize("option", ["pairs", "block", "batch_size"])
@pytest.mark.parametrize("value", [0, -5])
def test_counts_must_be_positive_before_anything_is_written(tmp_path, option, value, capsys):
    corpus = _corpus(tmp_path)
    with pytest.raises(ValueError, match=f"{option} must be a positive integer, got {value}"):
        build("/no/such/model", "en", corpus, tmp_path / "out", name="acme/tiny", verbose=False, **{option: value})
    flag = "--" + option.replace("_", "-")
    argv = ["build", "--model", "/no/such/model", "--name", "acme/tiny", "--lang", "en", "--corpus", str(corpus)]
    with pytest.raises(SystemExit) as info:
        baseline_main([*argv, "--out", str(tmp_path / "out"), flag, str(value)])
    assert info.value.code == 2
    assert f"argument {flag}: {value} is below 1: give 1 or more" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # no table, no manifest entry
