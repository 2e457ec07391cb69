"""Faults that must lose nothing: a server dying mid-download, corrupted cache files, untrusted code and paths.

The builder killed mid-run (SIGKILL) and resumed is in baselines/test_build.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hub import FIND_BASELINE, run_python, serve_dataset_repo
from servers import FlakyProxy

REPO = "testorg/faults"
MODEL = "acme/model"
RELPATH = f"de/{MODEL}.tsv"
# Long enough that half of it is a parseable table: only the hash check can tell it is incomplete.
TABLE = "LAYER,P,R,F\n" + "".join(
    f"{i},{0.1 + i / 200:.6f},{0.2 + i / 200:.6f},{0.15 + i / 200:.6f}\n" for i in range(25)
)


@pytest.fixture(scope="module")
def olah_port(tmp_path_factory):
    yield from serve_dataset_repo(tmp_path_factory.mktemp("hub"), REPO, {RELPATH: TABLE})


def _env(endpoint: str, hf_home: Path, **extra) -> dict:
    return {"HF_ENDPOINT": endpoint, "HF_HOME": str(hf_home), "FASTBERTSCORE_BASELINE_REPO": REPO, **extra}


def _cached_files(hf_home: Path) -> list[Path]:
    return sorted(p for p in hf_home.rglob("*") if p.is_file() and ".locks" not in p.parts)


@pytest.mark.hub
@pytest.mark.slow
def test_server_dying_mid_download_leaves_nothing_and_the_next_attempt_succeeds(olah_port, tmp_path):
    proxy = FlakyProxy(olah_port).start()
    hf_home = tmp_path / "hf"
    env = _env(f"http://127.0.0.1:{proxy.port}", hf_home, HF_HUB_DOWNLOAD_TIMEOUT="5")
    proxy.cut_next_download = True
    failed, _ = run_python(FIND_BASELINE.format(lang="de", model=MODEL), env)
    assert proxy.cut_bytes is not None and 0 < proxy.cut_bytes[0] < proxy.cut_bytes[1]
    message = failed["error"]
    assert f"no rescaling baseline for model {MODEL!r} and lang='de'" in message
    assert f"Hub http://127.0.0.1:{proxy.port}: {REPO}@main:{RELPATH} (" in message
    leftovers = [p for p in _cached_files(hf_home) if "datasets--" in str(p) and p.suffix != ".lock"]
    assert not [p for p in leftovers if "blobs" in p.parts or "snapshots" in p.parts], leftovers

    proxy.start()  # the server is back
    try:
        again, _ = run_python(FIND_BASELINE.format(lang="de", model=MODEL), env)
    finally:
        proxy.stop()
    assert again["text"] == TABLE and again["source"].startswith("Hub ")


@pytest.mark.hub
@pytest.mark.slow
def test_corrupted_cached_baseline_is_detected_refetched_and_never_used(olah_port, tmp_path):
    """Truncated, then parseable with one digit altered: each damage is caught by the same content hash, so the
    offline run meets the first and the online run the second (one process per run, as a user's runs are)."""
    hf_home = tmp_path / "hf"
    env = _env(f"http://127.0.0.1:{olah_port}", hf_home)
    first, _ = run_python(FIND_BASELINE.format(lang="de", model=MODEL), env)
    blob = Path(os.path.realpath(first["path"]))

    def corrupt(damage: str):
        data = blob.read_bytes()
        blob.chmod(0o644)
        blob.write_bytes(data[: len(data) // 2] if damage == "truncate" else data.replace(b"0.115000", b"0.715000", 1))
        assert blob.read_bytes() != data

    corrupt("truncate")
    offline, stderr = run_python(FIND_BASELINE.format(lang="de", model=MODEL), {**env, "HF_HUB_OFFLINE": "1"})
    assert "error" in offline and "corrupted: content hash" in offline["error"], offline
    assert "is corrupted" in stderr and not blob.exists()

    run_python(FIND_BASELINE.format(lang="de", model=MODEL), env)  # cache it again, then damage it otherwise
    corrupt("alter a digit")
    online, stderr = run_python(FIND_BASELINE.format(lang="de", model=MODEL), env)
    assert "is corrupted" in stderr and "fetching it again" in stderr
    assert online["text"] == TABLE and online["source"].startswith("Hub ")
    assert blob.read_text() == TABLE


def test_a_models_own_code_is_never_run(tmp_path, minilm_path):
    """A folder whose config asks for custom classes: refused with a clear message, and none of its code runs."""
    import shutil

    import fastbertscore as fb

    model = tmp_path / "custom"
    model.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(Path(minilm_path) / name, model / name)
    auto_map = {
        "AutoConfig": "configuration_x.XConfig",
        "AutoModel": "modeling_x.XModel",
        "AutoTokenizer": ["tokenization_x.XTokenizer", None],
    }
    (model / "config.json").write_text(__import__("json").dumps({"model_type": "x-custom", "auto_map": auto_map}))
    for module in ("configuration_x", "modeling_x", "tokenization_x"):
        (model / f"{module}.py").write_text(
            f"import pathlib\\npathlib.Path({str(tmp_path)!r}, 'RAN_{module}').touch()\\n"
        )
    with pytest.raises(ValueError, match="never runs a model's code"):
        fb.score(["a"], ["b"], model_type=str(model))
    assert not list(tmp_path.glob("RAN_*"))
