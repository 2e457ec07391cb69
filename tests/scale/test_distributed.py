"""Scale-out on real engines, CPU only: torch.distributed with gloo (2 processes) and datasets.map(num_proc=2)."""

from __future__ import annotations

import datasets
import pytest
import torch
from gloo import on_gloo_ranks
from tiny_models import MAX_LEN
from tolerances import TINY_WIDTH, assert_close, assert_scores_close, prf_bounds

import fastbertscore as fb
from fastbertscore.scale.distributed import score_distributed, shard_bounds


def test_shards_cover_every_pair_once():
    for n in (0, 1, 7, 10):
        for world in (1, 2, 3, 4):
            bounds = [shard_bounds(n, world, r) for r in range(world)]
            assert [i for a, b in bounds for i in range(a, b)] == list(range(n))


def _worker(rank, model, cands, refs):
    result = {}
    for kind, these_refs in (("single", refs), ("multi", [[r, cands[-1]] for r in refs])):
        for idf in (False, True):
            P, R, F = score_distributed(cands, these_refs, idf=idf, model_type=model, num_layers=2, device="cpu")
            result[f"{kind} {idf}"] = [P.tolist(), R.tolist(), F.tolist()]
        only_root = score_distributed(cands, these_refs, to="rank0", model_type=model, num_layers=2, device="cpu")
        result[f"{kind} rank0"] = None if only_root is None else only_root[2].tolist()
    # Last, since it changes what this process measures: the second machine measures bfloat16 as paying, the first not.
    from fastbertscore import hardware

    hardware.cpu_bf16_pays = lambda: rank == 1
    P, R, F = score_distributed(cands, refs, model_type=model, num_layers=2, device="cpu", dtype="auto")
    result["auto"] = [P.tolist(), R.tolist(), F.tolist()]
    return result


@pytest.fixture(scope="module")
def gloo_run(tiny_model, mt_pairs, tmp_path_factory):
    """One launch of two gloo ranks over 7 pairs (not divisible by the world size): what each rank returned. The
    gloo tests of this module assert on this one launch (each costs two interpreters importing torch and loading
    the model); their `xdist_group` keeps them on one worker, so the launch happens once per run."""
    model = tiny_model("bert")
    cands, refs = mt_pairs[0][:7], mt_pairs[1][:7]
    return model, cands, refs, on_gloo_ranks(_worker, tmp_path_factory.mktemp("gloo"), model, cands, refs)


@pytest.mark.distributed
@pytest.mark.slow
@pytest.mark.xdist_group("gloo")
@pytest.mark.second_path
@pytest.mark.parametrize("multi_ref", [False, True])
def test_two_gloo_processes_equal_one_process(gloo_run, multi_ref):
    model, cands, refs, ranks = gloo_run
    kind = "multi" if multi_ref else "single"
    refs = [[r, cands[-1]] for r in refs] if multi_ref else refs
    for idf in (False, True):
        single = fb.score(cands, refs, model_type=model, num_layers=2, idf=idf)
        for result in ranks:
            got = torch.tensor(result[f"{kind} {idf}"])
            assert got.shape == (3, 7)
            assert_scores_close(got, single, width=TINY_WIDTH, tokens=MAX_LEN, what=f"idf={idf}: ")
    assert ranks[1][f"{kind} rank0"] is None and len(ranks[0][f"{kind} rank0"]) == 7


@pytest.mark.distributed
@pytest.mark.slow
@pytest.mark.xdist_group("gloo")
def test_ranks_that_measure_auto_differently_run_the_first_ranks_precision(gloo_run):
    """dtype="auto" is measured on each machine; ranks whose measurements disagree would gather shards computed
    in two precisions. They all take the first rank's answer (float32 here)."""
    model, cands, refs, ranks = gloo_run
    single = fb.score(cands, refs, model_type=model, num_layers=2, dtype="float32")
    for result in ranks:
        assert_scores_close(torch.tensor(result["auto"]), single, width=TINY_WIDTH, tokens=MAX_LEN)


def _score_with_rank(batch, rank, model):
    import torch

    from fastbertscore.compute import compute

    if torch.cuda.is_available():
        device = f"cuda:{rank % torch.cuda.device_count()}"
    else:  # N processes x 1 thread; a forked worker must not use the parent's OpenMP pool (it would hang)
        device = "cpu"
        torch.set_num_threads(1)
    out = compute(batch["candidate"], batch["reference"], model_type=model, num_layers=2, device=device)
    return {"f1": out["f1"], "rank": [rank] * len(out["f1"])}


def test_dataset_map_with_ranks(tiny_model, mt_pairs):
    model = tiny_model("bert")
    ds = datasets.Dataset.from_dict({"candidate": mt_pairs[0][:20], "reference": mt_pairs[1][:20]})
    scored = ds.map(
        _score_with_rank,
        batched=True,
        batch_size=5,
        with_rank=True,
        num_proc=2,
        fn_kwargs={"model": model},
        load_from_cache_file=False,
    )
    single = fb.score(mt_pairs[0][:20], mt_pairs[1][:20], model_type=model, num_layers=2)[2]
    assert_close(scored["f1"], single, prf_bounds(TINY_WIDTH, tokens=MAX_LEN)[2], "F1 from Dataset.map")
    assert set(scored["rank"]) == {0, 1}
