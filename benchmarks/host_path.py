"""Where one whole-file call spends its time, side by side with bert-score 0.3.13: the encoder and the host around it.

    python benchmarks/host_path.py                 # layers 0 and 3, 3 alternating rounds; writes host_path_results.md

The WMT file in at_scale.py's system order, each run in a fresh process, the contenders alternating. Columns and
figures: docs/speed.md, "The host path".
"""

import argparse

import at_scale
import common
import torch
import transformers

CONTENDERS = ("bert-score", "fastbertscore")
ORDER = "system after system"
#: A run is at_scale.py's at the row's layer: its seconds, encoder seconds and our phases are the table's.
child = at_scale.child


def table(results: dict[int, dict[str, list[dict]]], n: int) -> str:
    head = (
        f"{common.machine()}, torch threads = 2; torch {torch.__version__}, transformers {transformers.__version__}; "
        f"`python benchmarks/host_path.py` ({n} pairs, {ORDER}, all-MiniLM-L6-v2; median of the alternating rounds, "
        "range in brackets).\n\n"
    )
    columns = ["layer:", "contender", "whole call s:", "inside the model s:", "outside the model s:"]
    columns += [f"{p}:" for p in (*common.PHASES, "rest")] + ["speed-up:", "outside: ours / theirs:"]
    body = []
    for layer in sorted(results):
        theirs = common.median(results[layer]["bert-score"])
        for contender in CONTENDERS:
            r, spread = common.median(runs := results[layer][contender]), common.spread([x["seconds"] for x in runs])
            phases, outside = r["phases"], r["seconds"] - r["encoder_seconds"]
            cells = [common.fmt(phases.get(p), ".2f") for p in common.PHASES]
            cells.append(f"{r['seconds'] - sum(phases.values()):.2f}" if phases else "–")
            share = f"{outside / (theirs['seconds'] - theirs['encoder_seconds']):.2f}"
            seconds = [f"{r['seconds']:.2f} ({spread})", f"{r['encoder_seconds']:.2f}", f"{outside:.2f}"]
            body.append([layer, contender, *seconds, *cells, f"{theirs['seconds'] / r['seconds']:.2f}×", share])
    return head + common.table(columns, body)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="0,3")
    parser.add_argument("--pairs", type=int, default=19238)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(common.HERE / "host_path_results.md"))
    args = common.command_line(parser, child, argv, nargs=4)
    layers = map(int, args.layers.split(","))
    results = {k: common.alternate(__file__, list(CONTENDERS), args.rounds, ORDER, args.pairs, k) for k in layers}
    common.write(table(results, args.pairs), args.out)


if __name__ == "__main__":
    main()
