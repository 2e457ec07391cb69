"""The baseline manifest and the layer registry: read, changed and written under a lock, so two processes
recording at once lose no entry; a file that cannot be read is refused, never overwritten."""

from __future__ import annotations

import json
import multiprocessing

import pytest

from fastbertscore.baselines import manifest
from fastbertscore.baselines.table import BaselineError
from fastbertscore.cli.main import main
from fastbertscore.models import layer_registry

WORKERS, RECORDS = 2, 60


def _record_baselines(root, worker: int, start) -> None:
    start.wait()  # both processes begin together
    for i in range(RECORDS):
        manifest.record(root, f"en/w{worker}/m{i}.tsv", source="test", worker=worker)


def _record_layers(worker: int, start) -> None:
    start.wait()
    for i in range(RECORDS):
        layer_registry.record(f"w{worker}/m{i}", i % 7, worker=worker)


def _run_together(target, *args) -> None:
    context = multiprocessing.get_context("spawn")  # fresh interpreters, as two real commands would be
    start = context.Barrier(WORKERS)
    workers = [context.Process(target=target, args=(*args, w, start)) for w in range(WORKERS)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=300)
    assert [p.exitcode for p in workers] == [0] * WORKERS


@pytest.mark.slow
def test_two_builds_recording_into_one_manifest_lose_no_entry(tmp_path):
    for w in range(WORKERS):
        (tmp_path / "en" / f"w{w}").mkdir(parents=True)
        for i in range(RECORDS):
            (tmp_path / "en" / f"w{w}" / f"m{i}.tsv").write_text(f"LAYER,P,R,F\n0,0.{w},0.{i},0.5\n")
    _run_together(_record_baselines, tmp_path)
    files = json.loads((tmp_path / manifest.MANIFEST).read_text())["files"]
    assert sorted(files) == sorted(f"en/w{w}/m{i}.tsv" for w in range(WORKERS) for i in range(RECORDS))
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow
def test_two_tunings_recording_into_one_registry_lose_no_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTBERTSCORE_LAYER_REGISTRY", str(tmp_path / "layers.json"))  # the children inherit it
    _run_together(_record_layers)
    data = json.loads((tmp_path / "layers.json").read_text())
    assert sorted(data) == sorted(f"w{w}/m{i}" for w in range(WORKERS) for i in range(RECORDS))
    assert all(data[f"w{w}/m{i}"]["layer"] == i % 7 for w in range(WORKERS) for i in range(RECORDS))


@pytest.mark.parametrize("text", ["{not json", "[]", '{"files": []}', "{}"])
def test_a_manifest_that_cannot_be_read_is_refused_and_kept(tmp_path, text):
    (tmp_path / manifest.MANIFEST).write_text(text)
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "m.tsv").write_text("LAYER,P,R,F\n0,0.1,0.2,0.3\n")
    with pytest.raises(BaselineError, match=f"manifest {tmp_path / manifest.MANIFEST} .*; fix or remove it"):
        manifest.record(tmp_path, "en/m.tsv", source="test")
    assert (tmp_path / manifest.MANIFEST).read_text() == text


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_a_registry_that_cannot_be_read_is_ignored_for_lookups_and_never_overwritten(
    tmp_path, monkeypatch, caplog, capsys, text
):
    path = tmp_path / "layers.json"
    path.write_text(text)
    monkeypatch.setenv("FASTBERTSCORE_LAYER_REGISTRY", str(path))
    with caplog.at_level("WARNING", logger="fastbertscore.models.layer_registry"):
        assert layer_registry.tuned_layer("acme/model") is None
    assert f"ignoring the layer registry {path}" in caplog.text
    with pytest.raises(layer_registry.RegistryError, match=f"the layer registry {path} .*; fix or remove it"):
        layer_registry.record("acme/model", 3)
    argv = ["tune-layer", "--data", str(tmp_path / "data.tsv"), "--record", "-m", "/no/such/model"]
    (tmp_path / "data.tsv").write_text("candidate\treference\thuman\na\tb\t0.5\n")
    assert main(argv) == 2  # refused before any model work (the model does not exist)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"bertscore: error: the layer registry {path} ")
    assert path.read_text() == text
