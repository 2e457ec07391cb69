"""fastbertscore on a GPU: parity with the CPU, speed against bert-score 0.3.13, memory, bf16 error, the ceiling.

    bash benchmarks/gpu_run.sh 1    # or 2: python benchmarks/gpu.py --part N --data .gpu/... --out "$OUT"
    python benchmarks/gpu.py --dry-run --data benchmarks/data/human_judgments_toen.tsv --out /tmp/dry   # on the CPU

Random-weight encoders of real shapes, a BPE tokenizer trained on the pairs (nothing downloaded); rows go to
OUT/gpu_results.md and .json after each size. The steps and the figures: docs/speed.md, "On a GPU".
"""

import argparse
import gc
import importlib.metadata
import json
import logging
import platform
import sys
import tempfile
import time
from pathlib import Path

import common
import torch
import transformers

import fastbertscore as fb

sys.path.insert(0, str(common.ROOT / "tests"))  # the tolerance policy: the one place a bound comes from
DATA = common.ROOT / ".gpu" / "human_judgments_toen.tsv"

_shape = lambda layers, width, heads, layer: {"layers": layers, "width": width, "heads": heads, "layer": layer}
SHAPES = {"roberta-large": _shape(24, 1024, 16, 17), "minilm": _shape(6, 384, 12, 6)}
TINY = {"roberta-large": _shape(3, 64, 4, 2), "minilm": _shape(2, 32, 2, 2)}  # --dry-run: shapes a CPU runs in seconds
PARTS = {  # (what, model, pairs) in the order they run: both parts fit one device call (about 6 minutes on an H200)
    1: [("parity", "minilm", 2000), ("speed", "roberta-large", 10_000), ("speed", "minilm", 10_000)],
    2: [("speed", "minilm", 100_000), ("speed", "roberta-large", 100_000)],
}
DRY = {1: [("parity", "roberta-large", 20), ("speed", "roberta-large", 30)], 2: [("speed", "minilm", 50)]}
# Up to this many pairs (not at 100k): bfloat16, float32 again under MEMORY_MB, the bare encoder and our phases.
CEILING_UP_TO = 20_000
MEMORY_MB = 1024
# The share of the bare encoder compares like with like: ours and the bare pass each warmed by a whole run, then
# the median of this many (the first call, as a user's one evaluation runs, is the row's seconds).
REPEATS = 3
DRY_ROWS = 40  # a dry run reads this many pairs, so 50 pairs goes past the file as 100k pairs does

log = logging.getLogger("gpu")
_bert_score = common.bert_score  # benchmarks/gpu_results.md's probe reaches it here too


def workload(pairs: list[tuple[str, str]], n: int) -> tuple[list[str], list[str]]:
    """``n`` pairs: the file's pairs in order, then again with `` (k)`` on every text of the k-th repeat."""
    tag = lambda i, text: text if i < len(pairs) else f"{text} ({i // len(pairs)})"
    return [tag(i, pairs[i % len(pairs)][0]) for i in range(n)], [tag(i, pairs[i % len(pairs)][1]) for i in range(n)]


def build_model(name: str, shape: dict, pairs: list[tuple[str, str]], root: Path) -> Path:
    """A random-weight RoBERTa-type encoder of ``shape`` and a byte-level BPE tokenizer trained on ``pairs``."""
    from tokenizers import ByteLevelBPETokenizer

    folder = root / name
    if (folder / "config.json").exists():
        return folder
    bpe, specials = ByteLevelBPETokenizer(), ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    bpe.train_from_iterator([t for p in pairs for t in p], vocab_size=8000, min_frequency=2, special_tokens=specials)
    trained = json.loads(bpe.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in trained["merges"]]
    tokenizer = transformers.RobertaTokenizer(trained["vocab"], merges, add_prefix_space=True, model_max_length=512)
    sizes = {"hidden_size": shape["width"], "num_hidden_layers": shape["layers"], "num_attention_heads": shape["heads"]}
    extra = {"vocab_size": len(tokenizer), "intermediate_size": 4 * shape["width"], "max_position_embeddings": 514}
    config = transformers.RobertaConfig(**sizes, **extra, type_vocab_size=1, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    transformers.AutoModel.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def environment(device: str) -> dict:
    """Versions, TF32 flags (as the legacy and the current API read them) and the attention backend."""

    def read(get):
        try:
            return get()
        except (RuntimeError, AttributeError) as error:
            return f"unreadable ({str(error)[:60]})"

    cuda, sdp = torch.backends.cuda, "flash_sdp mem_efficient_sdp math_sdp cudnn_sdp".split()
    info = {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__}
    info["fastbertscore"] = fb.__version__
    info["bert_score"] = importlib.metadata.version("bert-score")  # its __version__ says 0.3.12
    info["device"] = torch.cuda.get_device_name(device) if device.startswith("cuda") else f"CPU ({platform.machine()})"
    info |= {"cuda": torch.version.cuda, "float32 matmul precision": read(torch.get_float32_matmul_precision)}
    info["cuda.matmul.allow_tf32"] = read(lambda: cuda.matmul.allow_tf32)
    info["cudnn.allow_tf32"] = read(lambda: torch.backends.cudnn.allow_tf32)
    info["cuda.matmul.fp32_precision"] = read(lambda: cuda.matmul.fp32_precision)
    info["cudnn.conv.fp32_precision"] = read(lambda: torch.backends.cudnn.conv.fp32_precision)
    info["sdpa flash / mem-efficient / math / cudnn"] = [read(getattr(cuda, f"{k}_enabled")) for k in sdp]
    print("\n".join(f"{key}: {value}" for key, value in info.items()), flush=True)
    return info


def _timed(device: str, run) -> tuple[float, object, float]:
    """Seconds, result, and peak device memory in MB above what was allocated before (0 on the CPU)."""
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = run()
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - start, result, (torch.cuda.max_memory_allocated() - before) / 2**20 if cuda else 0.0


def _free(device: str) -> None:
    fb.clear_model_cache()
    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def bare_encoder_seconds(folder: Path, layer: int, dtype: str, texts: list[str], device: str) -> tuple[float, int]:
    """Our encoder alone (cut at ``layer``, in ``dtype``, with the attention kernels ours runs) over the distinct
    texts, longest first in batches of our default size: :func:`_median` seconds, and the real tokens."""
    scorer = fb.BERTScorer(model_type=str(folder), num_layers=layer, device=device, dtype=dtype)
    padded, tokens = common.length_sorted_batches(scorer.tokenizer, texts, fb.default_batch_size(device))
    batches = [(b["input_ids"].to(device), b["attention_mask"].to(device)) for b in padded]
    run = lambda encoder=scorer.embedder.encoder: [encoder(ids, mask) for ids, mask in batches]
    with torch.inference_mode():
        seconds = _median(device, run)
    del scorer, run
    _free(device)  # the next contender loads alone
    return seconds, tokens


def _median(device: str, run) -> float:
    """Seconds of ``run``: the median of ``REPEATS`` timed runs after one untimed one."""
    run()
    return sorted(_timed(device, run)[0] for _ in range(REPEATS))[REPEATS // 2]


def speed(name: str, folder: Path, shape: dict, cands: list[str], refs: list[str], device: str) -> list[dict]:
    """bert-score exact, ours exact and ours bf16, each loaded alone, on the same pairs: one row each."""
    torch.set_float32_matmul_precision("highest")  # bert-score in full float32 too, as ours runs (no TF32)
    torch.backends.cudnn.allow_tf32 = False
    warm, rows, small, layer = (cands[:64], refs[:64]), [], len(cands) <= CEILING_UP_TO, shape["layer"]
    # at 100k pairs bert-score and float32 only, so that both parts fit one device call
    contenders = ["bert-score", "float32"] + (["bfloat16", f"float32, memory_mb={MEMORY_MB}"] if small else [])
    for contender in contenders:
        dtype, _, budget = contender.partition(", memory_mb=")
        if contender == "bert-score":
            scorer = _bert_score().BERTScorer(model_type=str(folder), num_layers=layer, device=device)
        else:
            memory = {"memory_mb": int(budget)} if budget else {}
            scorer = fb.BERTScorer(model_type=str(folder), num_layers=layer, device=device, dtype=dtype, **memory)
        scorer.score(*warm)
        seconds, f1, peak = _timed(device, lambda s=scorer: s.score(cands, refs)[2].float().cpu())
        phases: dict[str, float] = {}
        if contender in ("float32", "bfloat16") and small:  # warm, for the share of the bare encoder
            warm_s = _median(device, lambda s=scorer: s.score(cands, refs)[2].float().cpu())
        if contender != "bert-score" and small:  # once more, split into phases (each waits for the device at its end)
            with fb.phase_times() as phases:
                phases["call"] = _timed(device, lambda s=scorer: s.score(cands, refs))[0]
        del scorer
        _free(device)
        rows.append({"part": "speed", "model": name, "pairs": len(cands), "seconds": seconds, "F": f1})
        rows[-1]["distinct_texts"], rows[-1]["peak_mb_above_model"] = len(set(cands) | set(refs)), peak
        rows[-1]["contender"] = contender if contender == "bert-score" else f"fastbertscore {contender}"
        rows[-1]["phases"] = dict(phases)
        if contender in ("float32", "bfloat16") and small:
            bare, tokens = bare_encoder_seconds(folder, layer, contender, cands + refs, device)
            rows[-1].update(tokens_per_s=tokens / warm_s, bare_encoder_tokens_per_s=tokens / bare)
            rows[-1]["share_of_bare"] = rows[-1]["tokens_per_s"] / rows[-1]["bare_encoder_tokens_per_s"]
    exact = rows[1]["F"]
    for row in rows:
        row.update(pairs_per_s=len(cands) / row["seconds"], x_bert_score=rows[0]["seconds"] / row["seconds"])
        row["max_dF_vs_exact"] = float((row.pop("F") - exact).abs().max())
    return rows


def parity(name: str, folder: Path, shape: dict, cands, refs, device: str) -> list[dict]:
    """Our fp32 on ``device`` against our fp32 on the CPU, held to the two-device bound of tests/tolerances.py."""
    from tolerances import assert_scores_close, two_devices

    scores, layer = {}, shape["layer"]
    for where in (device, "cpu"):
        scorer = fb.BERTScorer(model_type=str(folder), num_layers=layer, device=where)
        scores[where] = [x.double().cpu() for x in scorer.score(cands, refs)]
        tokens = max(len(x) for x in scorer.tokenizer(cands + refs)["input_ids"])
        del scorer
        _free(where)
    bound = two_devices(shape["width"], layer, tokens=tokens)
    within = True
    try:  # the policy's own check: P and R within the bound, F within it times F's conditioning
        assert_scores_close(scores[device], scores["cpu"], width=shape["width"], tokens=tokens, bound=bound)
    except AssertionError as error:
        log.warning("outside the two-device bound: %s", error)
        within = False
    row = {"part": "parity", "model": name, "pairs": len(cands), "contender": f"fastbertscore float32, {device} vs cpu"}
    for k, a, b in zip("PRF", scores[device], scores["cpu"], strict=True):
        row[f"max_d{k}"] = float((a - b).abs().max())
    row.update(two_device_bound=bound, within_bound=within, all_finite=bool(torch.isfinite(scores[device][2]).all()))
    return [row]


def write(rows: list[dict], info: dict, out: Path) -> None:
    """``gpu_results.json`` (everything) and ``gpu_results.md`` (one table per part), rewritten after each size."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_results.json").write_text(json.dumps({"environment": info, "rows": rows}, indent=1, default=str))
    text = (
        f"Measured on {info['device']}, torch {info['torch']}, transformers {info['transformers']}, "
        f"{time.strftime('%Y-%m-%d')}. Random-weight encoders of real shapes: the bf16 error is measured on "
        "random weights, not on a trained model.\n\n"
    )
    columns = ["model", "pairs:", "distinct texts:", "contender", "s:", "pairs/s:", "× bert-score:"]
    columns += ["peak MB above model:", "max ΔF vs exact (random weights):", "warm tokens/s:"]
    columns += ["bare encoder warm tokens/s:", "share:"]
    speed = [r for r in rows if r["part"] == "speed"]
    speed_rows = [
        [r["model"], r["pairs"], r["distinct_texts"], r["contender"], f"{r['seconds']:.2f}", f"{r['pairs_per_s']:.0f}"]
        + [f"{r['x_bert_score']:.2f}", f"{r['peak_mb_above_model']:.0f}", f"{r['max_dF_vs_exact']:.1e}"]
        + [common.fmt(r.get(k), s) for k, s in (("tokens_per_s", ".0f"), ("bare_encoder_tokens_per_s", ".0f"))]
        + [common.fmt(r.get("share_of_bare"), ".0%")]
        for r in speed
    ]
    text += common.table(columns, speed_rows) if speed_rows else ""
    if split := [(r, r["phases"]) for r in speed if r.get("phases")]:
        text += (
            "\nOur calls split into phases (`fastbertscore.phase_times()`, a second call of the same scorer; each phase "
            "waits for the device at its end, so the split call runs a little slower; rest: the call less its "
            "phases), seconds:\n\n"
        )
        columns = ["model", "pairs:", "contender", "call:", *(f"{k}:" for k in common.PHASES), "rest:"]
        rest = lambda ph: ph["call"] - sum(v for k, v in ph.items() if k != "call")
        cells = lambda ph: [*(common.fmt(ph.get(k), ".3f") for k in ("call", *common.PHASES)), f"{rest(ph):.3f}"]
        text += common.table(columns, [[r["model"], r["pairs"], r["contender"], *cells(ph)] for r, ph in split])
    for r in (r for r in rows if r["part"] == "parity"):
        text += (
            f"\nParity ({r['model']}, {r['pairs']} pairs, {r['contender']}): max |ΔP| {r['max_dP']:.1e}, "
            f"|ΔR| {r['max_dR']:.1e}, |ΔF| {r['max_dF']:.1e}; two-device bound {r['two_device_bound']:.1e} "
            f"(F: its conditioning): {'within' if r['within_bound'] else 'OUTSIDE'}.\n"
        )
    (out / "gpu_results.md").write_text(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", type=int, choices=[1, 2], help="which of the two commands (default: both)")
    parser.add_argument("--dry-run", action="store_true", help="the same steps on the CPU, tiny shapes and sizes")
    parser.add_argument("--data", type=Path, default=DATA, help="the WMT pairs (columns candidate, reference)")
    parser.add_argument("--out", type=Path, default=common.HERE, help="folder for gpu_results.md and .json")
    parser.add_argument("--root", type=Path, help="where the built models go (default: a temporary folder)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if not args.data.exists():
        parser.error(f"pairs not found: {args.data} (bash benchmarks/gpu_run.sh pack copies them into .gpu/)")
    device, shapes, plan = ("cpu", TINY, DRY) if args.dry_run else ("cuda", SHAPES, PARTS)
    if device == "cuda" and not torch.cuda.is_available():
        parser.error("no CUDA device here; --dry-run runs the same steps on the CPU")
    pairs = [(r["candidate"], r["reference"]) for r in common.rows(args.data)]
    pairs = [(c, r) for c, r in pairs if c.strip() and r.strip()][: DRY_ROWS if args.dry_run else None]
    root, info, rows = args.root or Path(tempfile.mkdtemp(prefix="gpu-bench-")), environment(device), []
    for part in [args.part] if args.part else [1, 2]:
        for what, name, n in plan[part]:
            folder, (cands, refs) = build_model(name, shapes[name], pairs, root), workload(pairs, n)
            log.info("part %d: %s, %s, %d pairs", part, what, name, n)
            rows += (parity if what == "parity" else speed)(name, folder, shapes[name], cands, refs, device)
            write(rows, info, args.out)
    print((args.out / "gpu_results.md").read_text())


if __name__ == "__main__":
    main()
