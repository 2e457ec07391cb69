"""Ray Data on a real local cluster (ray.init(num_cpus=2)): the same numbers as one process, in input order."""

from __future__ import annotations

import pytest
from tolerances import PRINTED_6, assert_close, assert_scores_close, prf_bounds

import fastbertscore as fb

ray = pytest.importorskip("ray", reason="Ray is the optional extra fastbertscore[ray] (in requirements-test.txt)")
from fastbertscore.cli.raydata import main
from fastbertscore.scale.raydata import score_ray_dataset, score_with_ray

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


@pytest.mark.second_path
def test_equals_one_process_in_input_order_with_idf_over_every_reference(cluster, mt_pairs):
    # 13 rows in batches of 3 over 2 actors: Ray keeps no order, and idf counted per batch instead of over every
    # reference would differ; every other row has two references. (Each actor costs an interpreter, torch and the
    # model, so one run checks all three.)
    cands = mt_pairs[0][:13]
    refs = [[mt_pairs[1][i], mt_pairs[1][i + 13]] if i % 2 else [mt_pairs[1][i]] for i in range(13)]
    ours = score_with_ray(
        cands, refs, idf=True, batch_size=3, concurrency=2, num_cpus=1, model_type=MINILM, num_layers=4
    )
    assert_scores_close(ours, fb.score(cands, refs, idf=True, model_type=MINILM, num_layers=4))


def test_dataset_keeps_its_columns_and_the_file_helper_writes_in_order(cluster, mt_pairs, tmp_path):
    cands, refs = mt_pairs[0][:6], mt_pairs[1][:6]
    ds = ray.data.from_items(
        [{"id": f"doc-{i}", "candidate": c, "reference": r} for i, (c, r) in enumerate(zip(cands, refs, strict=True))]
    )
    # idf=True here covers idf over plain string references (the multi-reference test covers lists of them), so
    # no separate Ray run is spent on it.
    rows = score_ray_dataset(
        ds, idf=True, batch_size=4, concurrency=1, num_cpus=1, model_type=MINILM, num_layers=4
    ).take_all()
    assert sorted(r["id"] for r in rows) == [f"doc-{i}" for i in range(6)]
    by_id = sorted(rows, key=lambda row: int(row["id"][4:]))
    idf_F = fb.score(cands, refs, idf=True, model_type=MINILM, num_layers=4)[2]
    assert_close([row["f1"] for row in by_id], idf_F, prf_bounds()[2], "F1 of the dataset rows, with idf")
    F = fb.score(cands, refs, model_type=MINILM, num_layers=4)[2]

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(
        "candidate\treference\n" + "".join(f"{c}\t{r}\n" for c, r in zip(cands, refs, strict=True)), encoding="utf-8"
    )
    out = tmp_path / "scores.tsv"
    assert (
        main(
            [
                str(pairs),
                "-m",
                MINILM,
                "-l",
                "4",
                "--concurrency",
                "1",  # the order across two actors is score_with_ray's, checked by the first test
                "--num-cpus",
                "1",
                "--batch-size",
                "2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    lines = out.read_text().splitlines()
    assert lines[0] == "P\tR\tF1" and len(lines) == 7
    printed = [float(line.split("\t")[2]) for line in lines[1:]]
    assert_close(printed, F, prf_bounds()[2] + PRINTED_6, "F1 written with 6 decimals")


def test_bad_input_is_refused_on_the_driver(cluster):
    with pytest.raises(TypeError, match=r"refs\[1\]"):
        score_with_ray(["a", "b"], ["x", None], model_type=MINILM)
