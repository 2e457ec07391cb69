"""Every file a command writes: never over one of its inputs (refused in one line naming both, before any model
work), and written whole or not at all (a write that fails half-way keeps the old file)."""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest
from confined import run_confined
from paths import RATINGS

from fastbertscore.cli.main import main

TEXTS = ["the cat sat on the mat", "it is raining today", "birds sing at dawn", "a dog ran", "tea is hot", "snow fell"]


@pytest.fixture()
def texts(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    return path


#: A model that does not exist: a command that loaded one before refusing its output would say so instead.
NO_MODEL = ["-m", "/no/such/model"]


def _refused(argv, capsys) -> str:
    assert main([*argv, *NO_MODEL]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


def test_correlate_never_writes_its_csv_over_the_data(tmp_path, capsys):
    data = tmp_path / "wmt.csv"
    with RATINGS.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))[:12]
    with data.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    before = data.read_bytes()
    argv = ["correlate", "--data", str(data), "--bootstrap", "0", "--no-surface"]
    line = _refused([*argv, "--out", str(tmp_path / "wmt.md")], capsys)
    assert (
        line
        == f"bertscore: error: --out's .csv {tmp_path / 'wmt.csv'} would overwrite --data {data}: write it to another file"
    )
    assert data.read_bytes() == before and not (tmp_path / "wmt.md").exists()
    line = _refused([*argv, "--out", str(tmp_path / "table.csv")], capsys)  # the table and its .csv: one file
    assert "--out's .csv" in line and f"would overwrite --out {tmp_path / 'table.csv'}" in line
    line = _refused([*argv, "--plot", str(tmp_path / "." / "wmt.csv")], capsys)
    assert line.startswith("bertscore: error: --plot ") and f"would overwrite --data {data}" in line


def test_pairwise_and_mbr_refuse_an_output_that_is_an_input(texts, tmp_path, capsys):
    link = tmp_path / "same-file.tsv"
    os.link(texts, link)  # another name of the same file
    line = _refused(["pairwise", "-a", str(texts), "-o", str(link)], capsys)
    assert line == f"bertscore pairwise: error: -o {link} would overwrite -a {texts}: write it to another file"
    refs = tmp_path / "refs.tsv"  # an input that ends as an output may
    refs.write_text(texts.read_text())
    line = _refused(["pairwise", "-a", str(texts), "-r", str(refs), "--out", str(refs)], capsys)
    assert f"--out {refs} would overwrite -r {refs}" in line
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps(TEXTS[:3]) + "\n")
    assert f"-o {samples} would overwrite samples {samples}" in _refused(
        ["mbr", str(samples), "-o", str(samples)], capsys
    )
    assert json.loads(samples.read_text()) == TEXTS[:3]


def test_no_output_overwrites_the_baseline_file_it_reads(texts, tmp_path, capsys):
    baseline = tmp_path / "baseline.tsv"
    baseline.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.3,0.3,0.3\n" for i in range(7)))
    before = baseline.read_bytes()
    rescaled = ["--rescale_with_baseline", "--baseline_path", str(baseline)]
    line = _refused(["pairwise", "-a", str(texts), "-o", str(baseline), *rescaled], capsys)
    assert line.endswith(f"-o {baseline} would overwrite --baseline_path {baseline}: write it to another file")
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps(TEXTS[:3]) + "\n")
    line = _refused(["mbr", str(samples), "-o", str(baseline), *rescaled], capsys)
    assert line.endswith(f"-o {baseline} would overwrite --baseline_path {baseline}: write it to another file")
    assert baseline.read_bytes() == before


@pytest.mark.parametrize("where", ["a folder", "under a file"])
def test_an_output_path_that_cannot_be_written_is_refused_before_any_model_work(texts, tmp_path, capsys, where):
    out = tmp_path / "matrix.tsv"
    if where == "a folder":
        out.mkdir()
        expected = f"-o {out} is a folder: name a file to write"
    else:  # a missing folder is made by the writer; a file where a folder should be cannot be
        (tmp_path / "file.txt").write_text("")
        out = tmp_path / "file.txt" / "sub" / "matrix.tsv"
        expected = f"-o {out}: {tmp_path / 'file.txt'} is a file, not a folder"
    assert _refused(["pairwise", "-a", str(texts), "-o", str(out)], capsys).endswith(expected)
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps(TEXTS[:3]) + "\n")
    assert _refused(["mbr", str(samples), "-o", str(out)], capsys).endswith(expected)


#: A child that runs commands on a disk that fills up at ``limit`` bytes a file: no output can be written. Each
#: command's stderr follows a line naming it.
ON_A_FULL_DISK = """
import json, sys
from fastbertscore.cli.main import main
commands = json.loads(sys.argv[1])
confine()
codes = []
for name, argv in commands.items():
    print(f"=== {name}", file=sys.stderr, flush=True)
    codes.append(main(argv))
print(json.dumps({"rc": codes}))
"""
PREVIOUS = b"the previous run's whole output\n"


@pytest.mark.slow
def test_an_output_that_cannot_be_written_whole_keeps_the_old_file(texts, tmp_path, tiny_model):
    """pairwise (.tsv, .npy) and mbr, each on a full disk, in one child (one interpreter and model load for all)."""
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(TEXTS) + "\n" for _ in range(4)))
    runs = {
        "pairwise .tsv": (tmp_path / "matrix.tsv", ["pairwise", "-a", str(texts)]),
        "pairwise .npy": (tmp_path / "matrix.npy", ["pairwise", "-a", str(texts)]),
        "mbr": (tmp_path / "picks.jsonl", ["mbr", str(samples)]),
    }
    model = tiny_model("bert")
    commands = {name: [*argv, "-o", str(out), "-m", model, "-l", "2"] for name, (out, argv) in runs.items()}
    for out, _ in runs.values():
        out.write_bytes(PREVIOUS)
    result, stderr = run_confined(ON_A_FULL_DISK, json.dumps(commands), max_file_bytes=64)
    said = dict(part.split("\n", 1) for part in stderr.split("=== ")[1:])
    for (name, (out, _)), rc in zip(runs.items(), result["rc"], strict=True):
        assert rc == 1 and "File too large" in said[name], name  # the write failed, and said so in one line
        assert out.read_bytes() == PREVIOUS, name  # not a truncated new one that looks valid
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []
    # and when the disk has room, the file is whole (no limit: no child needed)
    assert main(commands["pairwise .npy"]) == 0 and np.load(runs["pairwise .npy"][0]).shape == (len(TEXTS), len(TEXTS))
