"""Side-by-side speed and memory: bert-score 0.3.13, torchmetrics, and fastbertscore's modes.

    python benchmarks/speed.py                      # all workloads, 3 rounds, writes benchmarks/results_<cpu class>.md

Each (round, contender) in a fresh process, the contenders alternating; one results file per CPU class (bfloat16
pays only on some). Workloads and figures: docs/speed.md, "A few hundred pairs, by CPU class".
"""

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import common
import torch
from transformers import AutoModel, AutoTokenizer

import fastbertscore as fb

LAYER = 6  # all six layers of all-MiniLM-L6-v2


def workload(name: str) -> list[tuple[list[str], list[str]]]:
    """A workload: its calls, each (candidates, references)."""
    rows = common.rows()
    if name == "a":  # 600 unique real MT pairs
        pairs = list(dict.fromkeys((r["candidate"], r["reference"]) for r in rows))[:600]
        return [([c for c, _ in pairs], [r for _, r in pairs])]
    if name == "b":  # 8 systems against the same references, one call per system
        group = [r for r in rows if r["year"] == "2021" and r["lp"] == "ja-en"]
        systems = sorted({r["system"] for r in group})[:8]
        by = {(r["system"], r["seg_id"]): r for r in group}
        segs = sorted({r["seg_id"] for r in group if all((s, r["seg_id"]) in by for s in systems)}, key=int)
        return [([by[(s, g)]["candidate"] for g in segs], [by[(s, g)]["reference"] for g in segs]) for s in systems]
    if name.startswith("c"):  # growth: the first N thousand rows, cycled
        picked = [rows[i % len(rows)] for i in range(int(name[1:].rstrip("k")) * 1000)]
        return [([r["candidate"] for r in picked], [r["reference"] for r in picked])]
    if name == "d":  # long documents near 512 tokens: 20 consecutive segments of one test set joined, 4 systems
        group, docs = [r for r in rows if r["year"] == "2022" and r["lp"] == "cs-en"], []
        for system in sorted({r["system"] for r in group})[:4]:
            mine = sorted((r for r in group if r["system"] == system), key=lambda r: int(r["seg_id"]))
            for chunk in (mine[k : k + 20] for k in range(0, 200, 20)):
                if len(chunk) == 20 and all(r["candidate"].strip() for r in chunk):  # bert-score fails on empty texts
                    docs.append((" ".join(r["candidate"] for r in chunk), " ".join(r["reference"] for r in chunk)))
        return [([c for c, _ in docs], [r for _, r in docs])]
    if name.startswith("w"):  # window mode at about N thousand tokens per text (about 0.75 words per token)
        k = int(name[1:].rstrip("k"))
        words, size = " ".join(r["reference"] for r in rows).split(), int(k * 1000 * 0.75)
        texts = [" ".join(words[i * size : (i + 1) * size]) for i in range(max(1, 8 // k) + 1)]
        return [(texts[:-1], texts[1:])]
    raise KeyError(name)


CONTENDERS = {
    "a": ["bert-score", "torchmetrics", "fastbertscore", "fastbertscore-bf16", "fastbertscore-auto"]
    + ["encoder-only", "encoder-only-bf16"],
    "b": ["bert-score", "fastbertscore", "fastbertscore-cache", "fastbertscore-bf16-cache", "fastbertscore-disk"],
    "c10k": ["bert-score", "fastbertscore", "fastbertscore-bf16"],
    "c100k": ["fastbertscore-bf16"],
    "d": ["bert-score", "fastbertscore", "fastbertscore-bf16"],
    **{w: ["fastbertscore-window"] for w in ("w1k", "w4k", "w16k")},
}


def _scorer(contender: str, name: str, path: str):
    """``score(cands, refs)`` for the contender: F as a tensor (None for the bare encoder)."""
    if contender == "bert-score":
        return common.bert_score().BERTScorer(model_type=path, num_layers=LAYER).score
    if contender == "torchmetrics":
        from torchmetrics.functional.text.bert import bert_score as tm_score

        model, tok = AutoModel.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
        f1 = lambda c, r: torch.as_tensor(tm_score(c, r, model=model, user_tokenizer=tok, num_layers=LAYER)["f1"])
        return lambda c, r: (None, None, f1(c, r))
    if contender.startswith("encoder-only"):
        return _bare_encoder(path, name, bf16=contender.endswith("bf16"))
    kwargs: dict = {"dtype": "bfloat16"} if "bf16" in contender else {"dtype": "auto"} if "auto" in contender else {}
    kwargs.update({"cache_mb": 1024} if "cache" in contender else {})
    kwargs.update({"long_inputs": "window"} if "window" in contender else {})
    if contender.endswith("-disk"):  # the references already on disk from an earlier run; candidates are new
        kwargs["cache_dir"] = tempfile.mkdtemp(prefix="bench-emb-")
        refs = sorted({r for _, call_refs in workload(name) for r in call_refs})
        fb.BERTScorer(model_type=path, num_layers=LAYER, **kwargs).score(refs, refs)
    return fb.BERTScorer(model_type=path, num_layers=LAYER, **kwargs).score


def _bare_encoder(path: str, name: str, bf16: bool):
    """The limit of any scorer on this encoder path: the Hugging Face forward pass alone over each call's distinct
    sentences (:func:`common.length_sorted_batches`, tokenized before the clock starts); it returns no scores."""
    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    batches = lambda cands, refs: common.length_sorted_batches(tokenizer, cands + refs)[0]
    prepared = {(tuple(c), tuple(r)): batches(c, r) for c, r in workload(name)}

    def run(cands, refs):
        todo = prepared.get((tuple(cands), tuple(refs))) or batches(cands, refs)  # the untimed warm-up call
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            for batch in todo:
                model(batch["input_ids"], attention_mask=batch["attention_mask"])
        return None, None, None

    return run


def child(contender: str, name: str) -> dict:
    calls = workload(name)
    score = _scorer(contender, name, common.minilm())
    # Warm-up (kernel selection), not timed, the same for every contender: 32 pairs from the end of the data, which
    # no workload's calls use except c's cycled rows, so that no cache starts out holding the workload's texts.
    common.warm_up(score, common.rows()[-32:])
    start = time.perf_counter()
    F = [score(c, r)[2] for c, r in calls]
    F = None if F[0] is None else [f.tolist() for f in F]
    return {"seconds": time.perf_counter() - start, "peak_rss_mb": common.peak_rss_mb(), "F": F}


def measure(name: str, contenders: list[str], rounds: int) -> list[dict]:
    """Each (round, contender) in a fresh child process, the contenders alternating: one row per contender."""
    results = common.alternate(__file__, contenders, rounds, name)
    flat = {c: torch.tensor([x for call in runs[0]["F"] for x in call]) for c, runs in results.items() if runs[0]["F"]}
    exact = flat.get("bert-score", flat.get("fastbertscore"))
    base = statistics.median(r["seconds"] for r in results["bert-score"]) if "bert-score" in results else None
    n_pairs, rows = sum(len(c) for c, _ in workload(name)), []
    for contender, runs in results.items():
        seconds = statistics.median(r["seconds"] for r in runs)
        scored = contender in flat and contender != "bert-score"
        tau = None
        if contender.endswith(("bf16", "-auto")) and scored and "fastbertscore" in flat:
            from scipy.stats import kendalltau  # only here: requirements-bench.txt does not install scipy

            tau = kendalltau(flat[contender], flat["fastbertscore"]).statistic
        delta = float((flat[contender] - exact).abs().max()) if exact is not None and scored else None
        rows.append([name, contender, n_pairs, f"{seconds:.2f}", f"{n_pairs / seconds:.3g}"])
        rows[-1] += [common.fmt(base and base / seconds, ".2f"), f"{max(r['peak_rss_mb'] for r in runs):.0f}"]
        rows[-1] += [common.fmt(delta, ".1e"), common.fmt(tau, ".4f")]
    return rows


def table(rows: list[list], rounds: int) -> str:
    head = (
        f"Measured on {common.machine()}, torch threads = 2, all-MiniLM-L6-v2 with {LAYER} layers, median of {rounds} "
        "alternating round(s). Workloads, limits and notes: docs/speed.md.\n\n"
    )
    columns = ["workload", "contender", "pairs:", "s:", "pairs/s:", "× bert-score:", "peak RSS MB:"]
    return head + common.table([*columns, "max abs ΔF vs bert-score:", "τ vs exact:"], rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="a,b,d,c10k,c100k,w1k,w4k,w16k")
    parser.add_argument("--contenders", help="only these (comma-separated) of each workload's contenders")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", help="results file (default: benchmarks/results_<cpu class>.md)")
    # Before torch starts: oneDNN's kernel cache, capped for reduced precision on CPU (docs/speed.md).
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "64")
    args = common.command_line(parser, child, argv, nargs=2)
    args.out = args.out or str(common.HERE / f"results_{common.cpu_class()}.md")
    rows = []
    for name in args.workloads.split(","):
        wanted = [c for c in CONTENDERS[name] if not args.contenders or c in args.contenders.split(",")]
        rows += measure(name, wanted, 1 if name.startswith(("c", "w")) else args.rounds)
        Path(args.out).write_text(table(rows, args.rounds))  # after each workload: a long run keeps what it measured
    print(table(rows, args.rounds))


if __name__ == "__main__":
    main()
