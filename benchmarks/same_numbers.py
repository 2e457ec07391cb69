"""The same numbers as an earlier revision: the whole shared WMT file scored by that revision and by this tree.

    python benchmarks/same_numbers.py --against 07b9da6     # or main; --pairs 2000: the first 2,000 pairs only

Each side in its own process on its own copy of the package (``git archive``), all-MiniLM-L6-v2 at layer 3, plain
and with idf and rescaling: the largest |ΔP|, |ΔR|, |ΔF| against tests/tolerances.py's float32 bound (exit 1 past it).
"""

import argparse
import importlib.util
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import common
import torch

import fastbertscore as fb

CONFIGS = {"plain": {}, "idf + rescaled": {"idf": True, "lang": "en", "rescale_with_baseline": True}}


def child(n: str) -> dict:
    rows = common.rows()[: int(n) or None]
    cands, refs, path = [r["candidate"] for r in rows], [r["reference"] for r in rows], common.minilm()
    result = {"package": importlib.util.find_spec("fastbertscore").origin}
    for name, options in CONFIGS.items():
        counted = {"idf_sents": refs} if options.get("idf") else {}
        scorer = fb.BERTScorer(model_type=path, num_layers=3, **options, **counted)
        P, R, F = scorer.score(cands, refs)
        baseline = scorer.baseline_vals.tolist() if scorer.rescale_with_baseline else None
        result[name] = {"P": P.tolist(), "R": R.tolist(), "F": F.tolist(), "baseline": baseline}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="main", help="a git revision of this repository")
    parser.add_argument("--pairs", type=int, default=0, help="only the first N pairs (default: all 19,238)")
    args = common.command_line(parser, child, argv, nargs=1)
    sys.path.insert(0, str(common.ROOT / "tests"))
    from tolerances import prf_bounds

    with tempfile.TemporaryDirectory(prefix="fastbertscore-earlier-") as folder:
        archive = Path(folder) / "tree.tar"
        subprocess.run(["git", "archive", "-o", str(archive), args.against], cwd=common.ROOT, check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(folder, filter="data")
        earlier = common.in_child(__file__, args.pairs, env={"PYTHONPATH": folder}, cwd=Path(folder))
    current = common.in_child(__file__, args.pairs, env={"PYTHONPATH": str(common.ROOT)}, cwd=common.ROOT)
    print(f"{args.against} ({earlier['package']}) against this tree ({current['package']}):")
    outside = 0
    for name in CONFIGS:
        a, b = earlier[name], current[name]
        bounds = prf_bounds(baseline=b["baseline"]) if b["baseline"] else prf_bounds()
        line = [f"{name:>15}:"]
        for column, bound in zip("PRF", map(float, bounds), strict=True):  # F's is twice P's (tests/tolerances.py)
            diff = (torch.tensor(a[column]) - torch.tensor(b[column])).abs()
            outside += int((diff > bound).sum())
            line.append(f"max |Δ{column}| {float(diff.max()):.2e} (bound {bound:.1e})")
        print(" ".join(line), f"over {len(a['F'])} pairs")
    print("every pair within the float32 bound" if not outside else f"{outside} values outside the bound")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
