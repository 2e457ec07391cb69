"""Every script in benchmarks/ runs on a few pairs and writes its table, so none breaks unseen between the rare
runs that take minutes (or a lent GPU). Each writes under tmp_path, never over a committed results file; the
pairs are the first rows of tests/data, named by FASTBERTSCORE_BENCH_DATA (benchmarks/common.py). A script's main
runs in this process, and so do its contenders (a real run starts a process for each, to time it alone:
common.IN_PROCESS; same_numbers.py's run of another tree still gets a process, which covers that path); the GPU
bundle runs as a lent machine starts it, in a process of its own."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from paths import RATINGS, REPO

BENCHMARKS = REPO / "benchmarks"


def _module(name: str):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


def _run(script: str, *args: str, data: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO), "FASTBERTSCORE_BENCH_DATA": str(data), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The benchmark scripts, importable, reading the first 12 rows of the WMT sample (one test set, 12 systems);
    their child processes see the same file and this tree's package."""
    path = tmp_path / "tiny.tsv"
    path.write_text("".join(RATINGS.read_text(encoding="utf-8").splitlines(keepends=True)[:13]), encoding="utf-8")
    monkeypatch.setenv("FASTBERTSCORE_BENCH_DATA", str(path))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "64")  # what speed.py sets for itself and its children
    monkeypatch.setenv("FASTBERTSCORE_BENCH_IN_PROCESS", "1")  # contenders in this process (same_numbers' HEAD: not)
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module


@pytest.mark.slow
def test_at_scale_writes_its_table_json_and_plot(bench, tmp_path):
    out = tmp_path / "at_scale.md"
    bench("at_scale").main(["--sizes", "8", "--orders", "shuffled", "--rounds", "1", "--contenders",
                            "bert-score;fastbertscore", "--out", str(out), "--plot", str(tmp_path / "at.png")])  # fmt: skip
    assert "| shuffled | 8 | fastbertscore |" in out.read_text(encoding="utf-8")
    rows = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    ours = next(r for r in rows if r["contender"] == "fastbertscore")
    assert ours["tokens_ratio"] == pytest.approx(1.0) and ours["max_abs_dF"] < 1e-5
    assert (tmp_path / "at.png").stat().st_size > 0


@pytest.mark.slow
def test_host_path_writes_its_phases(bench, tmp_path):
    out = tmp_path / "host_path.md"
    bench("host_path").main(["--layers", "0", "--rounds", "1", "--pairs", "8", "--out", str(out)])
    ours = next(line for line in out.read_text(encoding="utf-8").splitlines() if "| 0 | fastbertscore |" in line)
    assert ours.count(" – ") == 0, "every phase of ours is timed"


@pytest.mark.slow
def test_speed_writes_its_table_for_exact_and_the_bare_encoder(bench, tmp_path):
    out = tmp_path / "speed.md"
    bench("speed").main(["--workloads", "a", "--contenders", "bert-score,fastbertscore,encoder-only", "--rounds", "1",
                         "--out", str(out)])  # fmt: skip
    text = out.read_text(encoding="utf-8")
    assert all(
        re.search(rf"\| a \| {c} \| 10 \| [\d.]+ \|", text) for c in ("bert-score", "fastbertscore", "encoder-only")
    )


@pytest.mark.slow
def test_same_numbers_finds_this_tree_equal_to_its_head(bench, capsys):
    assert bench("same_numbers").main(["--against", "HEAD", "--pairs", "4"]) == 0
    assert "every pair within the float32 bound" in capsys.readouterr().out


@pytest.mark.slow
def test_load_space_checks_every_answer(bench, tmp_path):
    out = tmp_path / "load.md"
    bench("load_space").main(["--users", "1", "--requests", "3", "--batch-every", "3", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "**failed: 0**" in text and "answers differing from the engine (> 1e-5): 0." in text
    assert all(f"| {kind} | 1 |" in text for kind in ("pair", "two refs", "5-pair file")), text


@pytest.mark.slow
def test_the_hostile_mix_builds_its_uploads_and_its_report(bench, tmp_path):
    """The hostile run itself takes minutes (its file at the work budget runs to its end): here its uploads are
    built, the one at the budget checked to sit just under it, and a report written from outcomes."""
    import fastbertscore as fb

    load_space = bench("load_space")
    files = load_space.uploads(tmp_path)
    job = fb.space.score_file(str(files["at_budget"]), "candidate", "reference", run=lambda job: job)
    assert 0.9 * fb.space.WORK_BUDGET <= job.work <= fb.space.WORK_BUDGET
    assert len([f for f in files if f.startswith("system")]) == fb.space.MAX_SYSTEMS + 1
    args = type("Args", (), {"requests": 2, "hostile_requests": 3})
    outcomes = [("layer 999", 0.1, "refused: no such layer"), ("a file", 30.0, "finished")]
    text = load_space.hostile_report(args, [0.2, 0.3], [], [0.4, 0.5], ["user 1 request 0: boom"], outcomes, 500, 520)
    assert "refused within 2 s: **1 of 1**" in text and "**+20 MB**" in text and "Failures (beside" in text


def test_gpu_workload_past_the_file_makes_every_text_new():
    pairs = [("a cat", "the cat"), ("a dog", "the dog"), ("a cat", "a bird")]
    cands, refs = _module("gpu").workload(pairs, 7)
    assert (cands[:3], refs[:3]) == ([c for c, _ in pairs], [r for _, r in pairs])
    assert cands[3:] == ["a cat (1)", "a dog (1)", "a cat (1)", "a cat (2)"]
    assert refs[6] == "the cat (2)"
    assert not set(cands[3:] + refs[3:]) & set(cands[:3] + refs[:3])


@pytest.mark.slow
def test_gpu_dry_run_runs_every_step_on_the_cpu_and_writes_its_rows(tmp_path):
    """The GPU bundle (gpu_run.sh + gpu.py) on the CPU (``--dry-run``), as a lent GPU machine runs it."""
    out = _run("gpu.py", "--dry-run", "--data", str(RATINGS), "--out", str(tmp_path / "out"), data=RATINGS)
    for line in ("torch:", "bert_score: 0.3.13", "cuda.matmul.fp32_precision:", "sdpa flash"):
        assert line in out, f"the environment header lacks {line!r}"
    rows = json.loads((tmp_path / "out" / "gpu_results.json").read_text())["rows"]
    parity = [r for r in rows if r["part"] == "parity"]
    assert parity and all(r["within_bound"] and r["all_finite"] for r in parity)
    speed = [r for r in rows if r["part"] == "speed"]
    contenders = ["bert-score", "fastbertscore float32", "fastbertscore bfloat16"]
    budgeted = f"fastbertscore float32, memory_mb={_module('gpu').MEMORY_MB}"
    assert sorted((r["model"], r["contender"]) for r in speed) == sorted(
        (m, c) for m in ("roberta-large", "minilm") for c in [*contenders, budgeted]
    )
    assert all(r["pairs"] == 50 and r["distinct_texts"] > 0 for r in speed if r["model"] == "minilm")
    ours = [r for r in speed if r["contender"] in contenders[1:]]
    assert all(0 < r["share_of_bare"] and r["bare_encoder_tokens_per_s"] > 0 for r in ours)
    split = [r["phases"] for r in speed if r["contender"].startswith("fastbertscore")]
    assert all(ph["call"] > 0 and {"tokenize", "encoder", "match"} <= set(ph) for ph in split)
    table = (tmp_path / "out" / "gpu_results.md").read_text()
    assert "measured on random weights" in table and "two-device bound" in table and "split into phases" in table


def test_wmt_data_builds_its_rows_from_clones_checking_every_file(tmp_path, monkeypatch):
    """wmt_data.py --git on one tiny test set in a local repository: DA's SIDs map to lines with documents sorted by
    id, a system's raters are counted, and a file whose git blob differs from the pinned one stops the build."""
    wmt_data = _module("wmt_data")
    repo = tmp_path / "wmt21"
    files = {
        "xml/newstest2021.is-en.all.xml": '<dataset><doc id="d2"><src><p><seg id="1">x</seg><seg id="2">y</seg></p>'
        '</src></doc><doc id="d1"><src><p><seg id="1">z</seg></p></src></doc></dataset>',
        "txt/references/newstest2021.is-en.ref.A.en": "ref one\nref two\nref three\n",
        "txt/system-outputs/newstest2021.is-en.hyp.sysA.en": "hyp one\nhyp two\nhyp three\n",
        "humaneval/newstest2021-toen/ad-isen-good-stnd-redup.csv": "WorkerId sys_id sid type\nw1\tsysA\t1\tSYSTEM\n"
        "w2\tsysA\t1\tREPEAT\nw1\tsysA\t3\tSYSTEM\nw3\tsysA\t3\tBAD_REF\n",
        "humaneval/newstest2021-toen/ad-seg-scores-is-en.csv": "SYS SEG RAW Z\nsysA 1 70.0 0.5\nsysA 3 40.0 -0.25\n",
    }
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    git = lambda *args: subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sources")
    blobs = {path: git("hash-object", path).stdout.strip() for path in files}
    sources = tmp_path / "sources.txt"
    sources.write_text("".join(f"2021\t{path}\t{blob}\n" for path, blob in blobs.items()), encoding="utf-8")
    head = git("rev-parse", "HEAD").stdout.strip()
    monkeypatch.setattr(wmt_data, "SOURCES", sources)
    monkeypatch.setattr(wmt_data, "REPOS", {2021: ("wmt21-news-systems", head), 2022: ("wmt22-news-systems", head)})
    monkeypatch.setattr(wmt_data, "SETS", [wmt_data.TestSet(2021, "is-en", "A")])
    out = tmp_path / "out.tsv"
    assert wmt_data.main(["--git", str(repo), str(repo), "--out", str(out)]) == 1  # built, but not the pinned file
    rows = out.read_text(encoding="utf-8").splitlines()
    assert rows == [  # SID 1 is d1's line 3, SID 3 is d2's second line
        "\t".join(wmt_data.HEADER),
        "is-en\t2021\tsysA\t2\thyp two\tref two\t-0.250000\t1",
        "is-en\t2021\tsysA\t3\thyp three\tref three\t0.500000\t2",
    ]
    sources.write_text(sources.read_text(encoding="utf-8").replace(blobs[next(iter(files))], "0" * 40))
    with pytest.raises(SystemExit, match="git blob"):
        wmt_data.main(["--git", str(repo), str(repo), "--out", str(out)])
