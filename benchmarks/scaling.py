"""Scale-out throughput on this machine: one process against two, through each of the three engines.

    python benchmarks/scaling.py                 # 3,000 unique real MT pairs, writes benchmarks/scaling_results.md
    python benchmarks/scaling.py --pairs 600

Every row is one command run from start to finish (process start, model load, scoring, writing scores), as
a user would run it; the time to score alone is also shown where the engine reports it. All rows score the
same pairs with all-MiniLM-L6-v2 at its default layer, and every row's F is checked against the single-process
one.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import wmt_data

ROOT = Path(__file__).resolve().parents[1]
DATA = wmt_data.DATA
MODEL = "sentence-transformers/all-MiniLM-L6-v2"

SINGLE = """
import csv, sys, time, torch, fastbertscore as fb
from fastbertscore.files import write_scores
torch.set_num_threads(int(sys.argv[3]))
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", newline=""), delimiter="\\t"))[1:]
start = time.perf_counter()
P, R, F = fb.score([c for c, _ in rows], [r for _, r in rows], model_type={model!r})
print("scored in", time.perf_counter() - start, file=sys.stderr)
write_scores(sys.argv[2], P, R, F)
"""

DATASETS_MAP = """
import csv, sys, time, torch, datasets
from fastbertscore.compute import compute
from fastbertscore.files import write_scores

COLUMNS = ("precision", "recall", "f1")

def add_scores(batch, rank):
    torch.set_num_threads(1)
    scores = compute(batch["candidate"], batch["reference"], model_type={model!r})
    return {{c: scores[c] for c in COLUMNS}}

rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", newline=""), delimiter="\\t"))[1:]
ds = datasets.Dataset.from_dict({{"candidate": [c for c, _ in rows], "reference": [r for _, r in rows]}})
start = time.perf_counter()
out = ds.map(add_scores, batched=True, batch_size=len(rows) // 2 + 1, with_rank=True, num_proc=2)
print("scored in", time.perf_counter() - start, file=sys.stderr)
write_scores(sys.argv[2], *(torch.tensor(out[c]) for c in COLUMNS))
"""


def unique_pairs(n: int) -> list[tuple[str, str]]:
    with DATA.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    # One line per text for the torchrun CLI's plain-text files: no newlines inside a text.
    pairs = dict.fromkeys(
        (" ".join(r["candidate"].split()), " ".join(r["reference"].split()))
        for r in rows
        if r["candidate"].strip() and r["reference"].strip()
    )
    return list(pairs)[:n]


def run(name: str, argv: list[str], env_extra: dict, out: Path) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **env_extra}
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{done.stderr[-3000:]}")
    scored = [float(line.split()[-1]) for line in done.stderr.splitlines() if line.startswith("scored in")]
    f1 = [float(line.split("\t")[2]) for line in out.read_text().splitlines()[1:]]
    return {"name": name, "wall": wall, "scored": scored[0] if scored else None, "f1": f1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "scaling_results.md")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scaling-"))
    pairs = unique_pairs(args.pairs)
    table = tmp / "pairs.tsv"
    with table.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, delimiter="\t").writerows([("candidate", "reference"), *pairs])
    (tmp / "cands.txt").write_text("".join(f"{c}\n" for c, _ in pairs), encoding="utf-8")
    (tmp / "refs.txt").write_text("".join(f"{r}\n" for _, r in pairs), encoding="utf-8")
    py = sys.executable
    one = {"OMP_NUM_THREADS": "1"}
    runs = [
        (
            "1 process, 1 thread",
            [py, "-c", SINGLE.format(model=MODEL), str(table), str(tmp / "s1.tsv"), "1"],
            one,
            "s1",
        ),
        (
            "1 process, 2 threads",
            [py, "-c", SINGLE.format(model=MODEL), str(table), str(tmp / "s2.tsv"), "2"],
            {},
            "s2",
        ),
        (
            "torchrun, 2 ranks × 1 thread (gloo)",
            [
                py,
                "-m",
                "torch.distributed.run",
                "--standalone",
                "--nproc_per_node",
                "2",
                "-m",
                "fastbertscore.scale.distributed",
                "-c",
                str(tmp / "cands.txt"),
                "-r",
                str(tmp / "refs.txt"),
                "-m",
                MODEL,
                "--out",
                str(tmp / "tr.tsv"),
            ],
            one,
            "tr",
        ),
        (
            "Dataset.map, num_proc=2 × 1 thread",
            [py, "-c", DATASETS_MAP.format(model=MODEL), str(table), str(tmp / "dm.tsv")],
            {},
            "dm",
        ),
        (
            "Ray Data, 2 actors × 1 CPU",
            [
                py,
                "-m",
                "fastbertscore.scale.raydata",
                str(table),
                "-m",
                MODEL,
                "--concurrency",
                "2",
                "--num-cpus",
                "1",
                "--batch-size",
                "256",
                "--out",
                str(tmp / "ray.tsv"),
            ],
            {"RAY_DISABLE_USAGE_STATS": "1"},
            "ray",
        ),
    ]
    results = []
    for name, argv, env, stem in runs:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        results.append(run(name, argv, env, tmp / f"{stem}.tsv"))
    reference = results[1]["f1"]
    base = results[1]["wall"]
    lines = [
        "# Scale-out on this machine",
        "",
        (
            f"`python benchmarks/scaling.py --pairs {len(pairs)}` on {platform.machine()}, {os.cpu_count()} cores, "
            f"{time.strftime('%Y-%m-%d')}: {len(pairs)} unique real MT pairs, {MODEL} at its default layer, "
            "each row one command from start to scores on disk."
        ),
        "",
        "| how | wall s | pairs/s | × 1 process (2 threads) | scoring alone s | max abs ΔF vs 1 process |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        delta = (
            max(abs(a - b) for a, b in zip(r["f1"], reference, strict=True))
            if len(r["f1"]) == len(reference)
            else float("nan")
        )
        scored = f"{r['scored']:.1f}" if r["scored"] is not None else "–"
        lines.append(
            f"| {r['name']} | {r['wall']:.1f} | {len(pairs) / r['wall']:.0f} | {base / r['wall']:.2f} | {scored} | "
            f"{delta:.1e} |"
        )
    report = "\n".join(lines) + "\n"
    args.out.write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
