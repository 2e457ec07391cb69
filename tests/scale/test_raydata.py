"""Ray Data on a real local cluster (ray.init(num_cpus=2)): the same numbers as one process, in input order."""

from __future__ import annotations

import collections
import json

import pytest
import torch
from tolerances import PRINTED_6, assert_close, assert_scores_close, prf_bounds

import fastbertscore as fb

ray = pytest.importorskip("ray", reason="Ray is the optional extra fastbertscore[ray] (in requirements-test.txt)")
from fastbertscore.cli.raydata import main
from fastbertscore.scale.raydata import reference_document_frequencies, score_ray_dataset, score_with_ray

# One worker runs this module (pyproject: --dist loadgroup), so one local cluster at a time takes its two CPUs.
pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.xdist_group("ray")]
from paths import MINILM


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    yield
    ray.shutdown()


def _printed(path) -> torch.Tensor:
    """The scale-out commands' P, R, F1 table (six decimals) as a (rows, 3) tensor."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "P\tR\tF1"
    return torch.tensor([[float(x) for x in line.split("\t")] for line in lines[1:]])


@pytest.mark.second_path
def test_the_command_equals_one_process_in_input_order_over_two_actors(cluster, mt_pairs, tmp_path):
    # The command over score_with_ray: 13 rows in Ray batches of 3 over 2 actors (Ray keeps no order), every other
    # row with two references (a JSON list in the cell), no idf (the dataset test has it). Each actor costs an
    # interpreter, torch and the model, so one run checks the command, the order and the references.
    cands = mt_pairs[0][:13]
    refs = [[mt_pairs[1][i], mt_pairs[1][i + 13]] if i % 2 else [mt_pairs[1][i]] for i in range(13)]
    pairs, out = tmp_path / "pairs.jsonl", tmp_path / "scores.tsv"
    pairs.write_text(
        "".join(json.dumps({"candidate": c, "reference": r}) + "\n" for c, r in zip(cands, refs, strict=True))
    )
    options = ["-m", MINILM, "-l", "4", "--concurrency", "2", "--num-cpus", "1", "--batch-size", "3"]
    assert main([str(pairs), *options, "--out", str(out)]) == 0
    expected = torch.stack(fb.score(cands, refs, model_type=MINILM, num_layers=4), dim=1)
    bounds = prf_bounds()
    for k in range(3):
        assert_close(_printed(out)[:, k], expected[:, k], bounds[k] + PRINTED_6, "PRF"[k] + " written, 6 decimals")


def test_a_dataset_keeps_its_columns_and_gets_idf_over_every_reference(cluster, mt_pairs):
    # 6 rows in Ray batches of 4, plain string references: idf counted per batch would differ.
    cands, refs = mt_pairs[0][:6], mt_pairs[1][:6]
    items = [
        {"id": f"doc-{i}", "candidate": c, "reference": r} for i, (c, r) in enumerate(zip(cands, refs, strict=True))
    ]
    rows = score_ray_dataset(
        ray.data.from_items(items), idf=True, batch_size=4, concurrency=1, num_cpus=1, model_type=MINILM, num_layers=4
    ).take_all()
    by_id = sorted(rows, key=lambda row: int(row["id"][4:]))
    assert [{k: row[k] for k in ("id", "candidate", "reference")} for row in by_id] == items
    expected = fb.score(cands, refs, idf=True, model_type=MINILM, num_layers=4)
    got = [torch.tensor([row[name] for row in by_id]) for name in ("precision", "recall", "f1")]
    assert_scores_close(got, expected)


def test_an_idf_mapping_reaches_every_actor_as_it_is(cluster, mt_pairs):
    # It was taken for idf=True: counted over the references, the mapping dropped, and the hash said so.
    cands, refs = mt_pairs[0][:4], mt_pairs[1][:4]
    mapping = collections.defaultdict(lambda: 2.0, {101: 0.0, 102: 0.0, 1996: 0.5})
    got = score_with_ray(cands, refs, idf=mapping, batch_size=2, concurrency=1, num_cpus=1, model_type=MINILM)
    assert_scores_close(got, fb.score(cands, refs, idf=mapping, model_type=MINILM))
    assert not torch.allclose(got[2], fb.score(cands, refs, idf=True, model_type=MINILM)[2])  # not counted idf


def test_the_drivers_counts_give_one_process_idf_over_one_or_several_references(mt_pairs):
    # What each actor does with the counts the driver hands it, here without actors: references of one or two texts
    # a row count every text once, and a plain string counts as a list of one.
    cands = mt_pairs[0][:7]
    refs = [[mt_pairs[1][i], mt_pairs[1][i + 7]] if i % 2 else [mt_pairs[1][i]] for i in range(7)]
    doc_freq, num_docs = reference_document_frequencies(refs, model_type=MINILM, num_layers=4)
    assert num_docs == 10
    weights = fb.IdfWeights.from_counts(torch.as_tensor(doc_freq), num_docs)
    scorer = fb.BERTScorer(model_type=MINILM, num_layers=4).with_idf(weights)
    assert_scores_close(scorer.score(cands, refs), fb.score(cands, refs, idf=True, model_type=MINILM, num_layers=4))
    plain, listed = (reference_document_frequencies(r, model_type=MINILM) for r in (refs[0], [[refs[0][0]]]))
    assert plain[1] == listed[1] == 1 and (plain[0] == listed[0]).all()


def test_bad_input_is_refused_on_the_driver(cluster):
    with pytest.raises(TypeError, match=r"refs\[1\]"):
        score_with_ray(["a", "b"], ["x", None], model_type=MINILM)


def test_the_command_refuses_bad_input_in_one_line_before_ray_starts(tmp_path, capsys):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("candidate,reference\na,b\n", encoding="utf-8")
    out = str(tmp_path / "s.tsv")
    # no -m: the embedded default model, as bertscore takes it (it was a traceback from inside the settings)
    assert main([str(pairs), "--out", out, "--reference-column", "ref"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "using the embedded default model" in err[0]
    assert err[1:] == [f"error: --reference-column names 'ref', not a column of {pairs}; it has: candidate, reference"]
    assert main([str(pairs), "--out", out, "-m", MINILM, "--memory_mb", "-5"]) == 2
    assert capsys.readouterr().err.strip() == "error: --memory_mb must be a positive integer, got -5"
