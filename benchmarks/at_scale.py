"""A whole evaluation, side by side: bert-score 0.3.13 and fastbertscore on the shared WMT file, in three orders.

    python benchmarks/at_scale.py                   # writes benchmarks/at_scale_results.md (+ .json) and docs/at_scale.png

Each (contender, order, size) in a fresh process: one timed call. Columns, figures: docs/speed.md, "A whole evaluation".
"""

import argparse
import functools
import json
import os
import random
import time
from pathlib import Path

import common
import torch
import transformers

import fastbertscore as fb

LAYER = 3
ORDERS = ("system after system", "segment after segment", "shuffled")
SIZES = (600, 5000, 19238)
MAPS = ("evaluate's module, datasets.map", "bertscore.py, datasets.map", "bertscore.py, datasets.map, cache_mb=0")
#: Each contender's options. MAPS: an evaluate module's compute() once per datasets.map batch of 1,000 pairs.
CONTENDERS = {"bert-score": {}, "fastbertscore": {}, "fastbertscore 256 MB": {"memory_mb": 256}}
CONTENDERS |= {MAPS[0]: {}, MAPS[1]: {}, MAPS[2]: {"cache_mb": 0}}
FULL_ONLY = ("fastbertscore 256 MB", *MAPS)  # the spilling budget and the per-batch calls: the whole file only
#: Run --rounds times, alternating; the others once. Map rows compare with evaluate's module, the rest with bert-score.
ROUNDED = ("bert-score", "fastbertscore", *MAPS[:2])
EVALUATE_MODULE = os.environ.get("EVALUATE_BERTSCORE_MODULE", "")


def pairs(order: str, n: int) -> tuple[list[str], list[str]]:
    rows = common.rows()
    seg = lambda r: int(r["seg_id"]) if r["seg_id"].isdigit() else 0
    if order == "system after system":
        rows.sort(key=lambda r: (r["year"], r["lp"], r["system"], seg(r)))
    elif order == "segment after segment":
        rows.sort(key=lambda r: (r["year"], r["lp"], seg(r), r["system"]))
    else:
        random.Random(0).shuffle(rows)
    return [r["candidate"] for r in rows[:n]], [r["reference"] for r in rows[:n]]


def make_score(contender: str, path: str, layer: int):
    """The contender's ``score(cands, refs)``; MAPS: an evaluate module's ``compute`` per ``datasets.map`` batch."""
    options = {"model_type": path, "num_layers": layer, **CONTENDERS[contender]}
    if contender == "bert-score":
        return common.bert_score().BERTScorer(**options).score
    if contender not in MAPS:
        return fb.BERTScorer(**options).score
    import datasets  # evaluate imports it too
    import evaluate

    module = EVALUATE_MODULE if contender.startswith("evaluate") else str(common.ROOT / "bertscore.py")
    compute = functools.partial(evaluate.load(module).compute, **options)
    compute(predictions=["warm"], references=["up"])  # loads the model, as the first batch would

    def score(cands, refs):
        ds = datasets.Dataset.from_dict({"candidate": cands, "reference": refs})
        add = lambda batch: {"f1": compute(predictions=batch["candidate"], references=batch["reference"])["f1"]}
        out = ds.map(add, batched=True, batch_size=1000, keep_in_memory=True)
        # to_dict reads the column in one go; out["f1"] is a lazy Column that indexes row by row (1 s for the file)
        return None, None, torch.tensor(out.to_dict()["f1"])

    return score


def child(contender: str, order: str, size: str, layer: int | str = LAYER) -> dict:
    """One timed call; host_path.py's runs name their ``layer``."""
    path, n = common.minilm(), int(size)
    cands, refs = pairs(order, n)
    score = make_score(contender, path, int(layer))
    loaded = common.rss_mb()
    common.warm_up(score)
    with common.encoder_calls() as tokens, fb.phase_times() as phases:  # phases: host_path.py's columns
        start = time.perf_counter()
        F = score(cands, refs)[2]
        seconds = time.perf_counter() - start
    peak = common.peak_rss_mb()  # before the counting below allocates its own
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, use_fast=False)  # as both contenders load it
    distinct = sum(len(ids) for ids in tokenizer([t.strip() for t in set(cands) | set(refs)])["input_ids"])
    measured = {"seconds": seconds, "rss_loaded_mb": loaded, "peak_rss_mb": peak, "encoder_seconds": tokens.seconds}
    ratios = {"tokens_ratio": tokens.real / distinct, "padded_ratio": tokens.padded / max(tokens.real, 1)}
    return {"contender": contender, "order": order, "pairs": n, **measured, **ratios, "phases": phases, "F": F.tolist()}


def table(rows: list[dict]) -> str:
    head = (
        f"Measured on {common.machine()}, torch threads = 2, all-MiniLM-L6-v2 at layer {LAYER}; each run in its own "
        "process (benchmarks/at_scale.py): bert-score and fastbertscore run in alternating rounds (the median and the "
        "range of their rounds; peak RSS: the median of the rounds' peaks), the others once. Encoder s: the time "
        "inside the Hugging Face model's calls; padded / real: the tokens those calls ran over the real ones.\n\n"
    )
    columns = ["order", "pairs:", "contender", "s (median):", "range s:", "ms/pair:", "speed-up:", "against"]
    columns += ["encoder s:", "RSS loaded MB:", "peak RSS MB (range):", "tokens run / distinct:", "padded / real:"]
    body = [
        [r["order"], r["pairs"], r["contender"], f"{r['seconds']:.1f}", common.spread(r["rounds"])]
        + [f"{1000 * r['seconds'] / r['pairs']:.2f}", common.fmt(r["speedup"], ".2f"), r["against"]]
        + [common.fmt(r.get("encoder_seconds"), ".1f"), f"{r['rss_loaded_mb']:.0f}"]
        + [f"{r['peak_rss_mb']:.0f}" + (f" ({common.spread(r['peak_rss_rounds'], '.0f')})" * (len(r["rounds"]) > 1))]
        + [f"{r['tokens_ratio']:.3f}", common.fmt(r.get("padded_ratio"), ".3f"), common.fmt(r["max_abs_dF"], ".1e")]
        for r in rows
    ]
    return head + common.table([*columns, "max abs ΔF:"], body)


def plot(rows: list[dict], path: Path) -> None:
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, nothing to close

    ax = (fig := Figure(figsize=(7, 4.2))).subplots()
    for key in dict.fromkeys((r["contender"], r["order"]) for r in rows):  # one line per (contender, order)
        group = sorted((r for r in rows if (r["contender"], r["order"]) == key), key=lambda r: r["pairs"])
        ax.plot([r["pairs"] for r in group], [1000 * r["seconds"] / r["pairs"] for r in group], marker="o",
                label=", ".join(key), linestyle="--" if key[0] == "bert-score" else "-")  # fmt: skip
    ax.set(xscale="log", xlabel="pairs in the call", ylabel="ms per pair", ylim=(0, None))
    ax.set_title("Time per pair against the size of the evaluation (lower is better)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def compared(runs: dict[str, list[dict]]) -> list[dict]:
    """Per contender: its run of median time, every round's seconds and peak RSS, the median peak RSS (a process's
    peak moves by tens of MB between identical runs with the heap's layout), the speed-up and max |ΔF|."""
    results = {c: common.median(done) for c, done in runs.items()}
    rows = []
    for contender, r in results.items():
        r["rounds"] = [x["seconds"] for x in runs[contender]]
        r["peak_rss_rounds"] = [x["peak_rss_mb"] for x in runs[contender]]
        r["peak_rss_mb"] = common.median(runs[contender], "peak_rss_mb")["peak_rss_mb"]
        r["against"] = against = MAPS[0] if contender in MAPS else "bert-score"
        base = results.get(against) if contender != against else None
        r["speedup"] = base["seconds"] / r["seconds"] if base else None
        r["max_abs_dF"] = max(abs(a - b) for a, b in zip(r["F"], base["F"], strict=True)) if base else None
        rows.append({k: v for k, v in r.items() if k not in ("F", "phases")})
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", default=",".join(ORDERS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--contenders", default=";".join(CONTENDERS), help="names separated by ';' (they hold commas)")
    parser.add_argument("--out", default=str(common.HERE / "at_scale_results.md"))
    parser.add_argument("--plot", default=str(common.ROOT / "docs" / "at_scale.png"))
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs of bert-score and fastbertscore")
    parser.add_argument("--evaluate-module", default=EVALUATE_MODULE, help="evaluate's metrics/bertscore/bertscore.py")
    args = common.command_line(parser, child, argv, nargs=3)
    contenders = [name.strip() for name in args.contenders.split(";")]
    if unknown := [name for name in contenders if name not in CONTENDERS]:
        parser.error(f"unknown contender(s) {unknown}; choose from {list(CONTENDERS)}")
    if not args.evaluate_module and MAPS[0] in contenders:
        contenders.remove(MAPS[0])
        print("no --evaluate-module: evaluate's own module is left out", flush=True)
    env = {"EVALUATE_BERTSCORE_MODULE": str(Path(args.evaluate_module).resolve())} if args.evaluate_module else {}
    rows = []
    for order in args.orders.split(","):
        for n in map(int, args.sizes.split(",")):
            skip = lambda k, c: (c in FULL_ONLY and n != max(SIZES)) or (k and c not in ROUNDED)  # noqa: B023
            rows += compared(common.alternate(__file__, contenders, args.rounds, order, n, skip=skip, env=env))
            Path(args.out).write_text(table(rows), encoding="utf-8")  # after each size: a long run keeps its rows
            Path(args.out).with_suffix(".json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    plot(rows, Path(args.plot))
    print(table(rows))


if __name__ == "__main__":
    main()
