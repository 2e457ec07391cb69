"""compare(): sacrebleu's paired bootstrap and approximate randomization, computed by sacrebleu itself on the
same segment scores; the identical-system case; bad input refused before any model work."""

from __future__ import annotations

import csv
import json
import logging

import numpy as np
import pytest
import sacrebleu.significance as sacre
from paths import MINILM
from sacrebleu.metrics.base import Metric, Score, Signature
from tolerances import assert_close, assert_scores_close, fp32, fp64
from wmt import wmt_systems, wmt_systems_of

import fastbertscore as fb
from fastbertscore.significance import resampling


class SegmentMean(Metric):
    """A sacrebleu Metric whose corpus score is the mean of given segment scores (a hypothesis names its row)."""

    def __init__(self, table: dict[str, float]):
        super().__init__()
        self._table = table

    def _extract_corpus_statistics(self, hypotheses, references):
        return [[self._table[h], 1.0] for h in hypotheses]

    def _aggregate_and_compute(self, stats):
        return self._compute_score_from_stats(np.sum(np.asarray(stats, dtype=np.float64), axis=0))

    def _compute_score_from_stats(self, stats):
        return Score("F1", float(stats[0] / stats[1]))

    def _preprocess_segment(self, sent):
        return sent

    def _compute_segment_statistics(self, hypothesis, ref_kwargs):
        raise NotImplementedError

    def _extract_reference_info(self, refs):
        raise NotImplementedError

    def get_signature(self):
        return Signature({"num_refs": 1})


def sacrebleu_paired(result: fb.Comparison, test: str, n_samples: int, monkeypatch, seed: int):
    """sacrebleu's PairedTest on our F1 segment scores: {name: (score, mean, ci, p)}."""
    monkeypatch.setenv("SACREBLEU_SEED", str(seed))
    table = {
        f"{name}\t{i}": float(f) for name, scores in result.segment_scores.items() for i, f in enumerate(scores[2])
    }
    named = [(name, [f"{name}\t{i}" for i in range(len(scores[2]))]) for name, scores in result.segment_scores.items()]
    named.sort(key=lambda item: item[0] != result.baseline)
    extra = {"n_ar_confidence": resampling.AR_CONFIDENCE_SAMPLES} if test == "ar" else {}
    _, scores = sacre.PairedTest(
        named, {"F1": SegmentMean(table)}, None, test_type=test, n_samples=n_samples, **extra
    )()
    return {name: (r.score, r.mean, r.ci, r.p_value) for name, r in zip(scores["System"], scores["F1"], strict=True)}


@pytest.fixture(scope="module")
def systems():
    outputs, refs = wmt_systems()
    outputs["copy of the first"] = list(outputs[next(iter(outputs))])  # identical to the baseline
    return outputs, refs


def _near_ties(result, name, test, n_samples, seed) -> int:
    """How many resampled statistics lie within float32 summation error of the observed difference: only these
    may fall on the other side in sacrebleu (float32 sums) than here (float64)."""
    base, system = result.segment_scores[result.baseline][2], result.segment_scores[name][2]
    n, bound = len(base), 2 * fp32(0, len(base))
    observed = abs(base.mean() - system.mean())
    if test == "bs":
        idx = resampling.bootstrap_indices(n, n_samples, seed)
        diffs = np.abs(resampling.resampled_means(system, idx) - resampling.resampled_means(base, idx))
        stats = diffs - diffs.mean()
    else:
        masks = resampling.randomization_masks(n, n_samples, np.random.default_rng(seed))
        stats = np.abs(2 * (masks @ (base - system)) - (base - system).sum()) / n  # as in paired_randomization
    return int(np.count_nonzero(np.abs(stats - observed) <= bound))


@pytest.mark.parametrize(("test", "n_samples", "seed"), [("bs", 1000, 12345), ("ar", 2000, 7)])
def test_intervals_and_p_values_equal_sacrebleus(systems, test, n_samples, seed, monkeypatch):
    outputs, refs = systems
    result = fb.compare(outputs, refs, test=test, n_samples=n_samples, seed=seed, model_type=MINILM)
    theirs = sacrebleu_paired(result, test, n_samples, monkeypatch, seed)
    ours = result.to_dict()
    assert list(ours) == list(theirs)  # the baseline first, then the order given
    n = len(refs)
    for k, (name, (score, mean, ci, p)) in enumerate(theirs.items()):
        ours_f1 = result.systems[k].intervals[2]
        assert_close(ours[name]["f1"], score, fp32(0, n), f"{name}: F1")
        assert_close(ours_f1.mean, mean, fp32(0, n), f"{name}: bootstrap mean")  # float32 sums in sacrebleu
        assert_close(ours[name]["f1_ci"], ci, 2 * fp32(0, n), f"{name}: 95% half-width")
        if k == 0:
            assert ours[name]["p_value"] is None and p is None
        elif name == "copy of the first":
            # sacrebleu calls a system identical to its baseline significant: 1/(trials + 1). It is not.
            assert p == pytest.approx(1 / (n_samples + 1)) and ours[name]["p_value"] == 1.0
        else:
            allowed = _near_ties(result, name, test, n_samples, seed) / (n_samples + 1)
            assert abs(ours[name]["p_value"] - p) <= allowed, (name, ours[name]["p_value"], p)


def test_scores_are_segment_means_of_score_and_references_are_shared(systems):
    outputs, refs = systems
    result = fb.compare(outputs, refs, test=None, model_type=MINILM, num_layers=4, idf=True)
    for name, out in outputs.items():
        single = fb.score(out, refs, model_type=MINILM, num_layers=4, idf=True)  # idf over the references once
        assert_scores_close(result.segment_scores[name], single)
        assert result.to_dict()[name]["p_value"] is None
    assert "test:none" in result.signature and result.signature.startswith(f"m:{MINILM}|l:4|idf:yes")


def test_rescaled_and_several_references(systems):
    outputs, refs = systems
    multi = [[r, refs[(i + 1) % len(refs)]] for i, r in enumerate(refs)]
    result = fb.compare(
        outputs, multi, baseline="Facebook-AI", model_type=MINILM, lang="en", rescale_with_baseline=True
    )
    scorer = fb.BERTScorer(model_type=MINILM, lang="en", rescale_with_baseline=True)
    for name, out in outputs.items():
        assert_scores_close(result.segment_scores[name], scorer.score(out, multi), baseline=scorer.baseline_vals)
    assert result.baseline == "Facebook-AI" and "|r:baseline:" in result.signature


def test_an_empty_output_is_named_by_its_system_and_segment(caplog):
    # compare lays the systems' outputs side by side; a warning names the output as the caller wrote it
    refs = ["The cat sat on the mat.", "It is raining.", "A dog ran."]
    outputs = {"A": ["A cat sat.", "It rains.", "A dog."], "B": ["The cat.", "Rain.", " "]}
    multi = [[r, "Something else."] for r in refs[:2]] + [["", "A dog ran fast."]]
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        fb.compare(outputs, multi, test=None, model_type=MINILM)
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "1 candidate(s) empty (first: systems['B'][2])" in said
    assert "1 reference(s) empty (first: references[2][0])" in said


def test_tables_name_the_baseline_mark_significance_and_carry_the_signature(systems):
    outputs, refs = systems
    result = fb.compare(outputs, refs, n_samples=200, model_type=MINILM)
    text, markdown = result.table(), result.to_markdown()
    first = next(iter(outputs))
    assert f"Baseline: {first}" in text and f"| Baseline: {first} |" in markdown
    for s in result.systems[1:]:
        mark = "*" if s.p_value < 0.05 else ""
        assert f"{s.p_value:.4f}{mark}" in text
    assert result.signature in text and "test:bs|resamples:200|seed:12345" in result.signature


@pytest.mark.parametrize(
    ("systems", "kwargs", "error", "message"),
    [
        (
            {"A": ["x", "y"], "B": ["x"]},
            {},
            ValueError,
            r"systems\['B'\] and references differ in length \(1 candidates, 2",
        ),
        ({"A": ["x", "y"]}, {}, ValueError, r"a paired test \(test='bs'\) needs at least two systems, got 1"),
        ({"A": ["x", "y"], "B": ["x", None]}, {}, TypeError, r"systems\['B'\]\[1\] is None"),
        ({}, {}, ValueError, "systems is empty"),
        ([["x", "y"]], {}, TypeError, "systems must be a mapping"),
        (
            {"A": ["x", "y"], "B": ["x", "y"]},
            {"baseline": "C"},
            ValueError,
            "baseline='C' is not one of the systems: A, B",
        ),
        ({"A": ["x", "y"], "B": ["x", "y"]}, {"test": "t"}, ValueError, "test='t' is not one of 'bs', 'ar', None"),
        ({"A": ["x", "y"], "B": ["x", "y"]}, {"n_samples": 0}, ValueError, "n_samples"),
        ({"A": ["x", "y"], "B": ["x", "y"]}, {"seed": -1}, ValueError, r"seed must be 0 or more \(or None\), got -1"),
        (  # 10**15 resamples of 2 segments: about 29,000 TiB, more than any host has (a MemoryError after the work)
            {"A": ["x", "y"], "B": ["x", "y"]},
            {"n_samples": 10**15},
            ValueError,
            r"n_samples=1,000,000,000,000,000 over 2 segments needs about 29,802,322.4 GiB for the resampling, more",
        ),
    ],
)
def test_bad_input_is_refused_before_any_model_work(systems, kwargs, error, message):
    with pytest.raises(error, match=message):
        fb.compare(systems, ["r1", "r2"], model_type="no-such-org/no-such-model", **kwargs)


def test_resampled_means_are_the_means_over_sacrebleus_draws():
    """The vectorised resampling (one index matrix, a gather and a mean per system) equals a loop over
    sacrebleu's draws, resample by resample (its speed is measured in benchmarks/, never asserted)."""
    rng = np.random.default_rng(0)
    scores = rng.random((4, 300))
    idx = resampling.bootstrap_indices(300, 200, 12345)
    assert np.array_equal(idx, np.random.default_rng(12345).choice(300, size=(200, 300), replace=True))
    means = resampling.resampled_means(scores, idx)
    looped = np.array([[scores[k, draw].mean() for draw in idx] for k in range(len(scores))])
    assert_close(means, looped, fp64(300), "resampled means")


def _write(folder, name, lines):
    path = folder / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_compare_command_on_real_wmt_outputs(systems, tmp_path, capsys):
    from fastbertscore.cli.main import main

    outputs, refs = systems
    files = [_write(tmp_path, f"{name}.txt", lines) for name, lines in list(outputs.items())[:3]]
    ref = _write(tmp_path, "ref.txt", refs)
    argv = ["compare", "-r", str(ref), *map(str, files), "--paired-bs", "--n-samples", "300", "-m", MINILM, "-l", "4"]
    assert main([*argv, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = fb.compare(
        {f.name: outputs[f.stem] for f in files}, refs, n_samples=300, model_type=MINILM, num_layers=4
    )
    assert out["signature"] == expected.signature and out["baseline"] == files[0].name
    for name, row in expected.to_dict().items():
        assert out["systems"][name] == pytest.approx(row, abs=0)  # the same computation, the same numbers
    assert main([*argv, "--baseline", files[1].name]) == 0
    text = capsys.readouterr().out
    assert f"Baseline: {files[1].name}" in text and "Signature: " in text
    with pytest.raises(SystemExit) as exit_:  # one test at a time: argparse's own usage error
        main([*argv, "--format", "markdown", "--paired-ar"])
    assert exit_.value.code == 2


@pytest.mark.parametrize(
    ("files", "flags", "message"),
    [
        ({"a.txt": ["x", "y"], "b.txt": ["x"]}, [], "system file {b.txt} has 1 lines but the references have 2"),
        ({"a.txt": ["x", "y"]}, ["--paired-bs"], "--paired-bs compares systems with a baseline: give at least two"),
        ({"a.txt": ["x", "y"], "sub/a.txt": ["x", "y"]}, [], "two systems are named a.txt"),
        ({"a.txt": ["x", "y"], "b.txt": []}, [], "system file {b.txt} is empty"),
        ({"a.txt": ["x", "y"]}, ["--baseline", "c.txt"], "--baseline c.txt is not one of the systems: a.txt"),
        ({"a.txt": ["x", "y"]}, ["--n-samples", "0"], "--n-samples must be 1 or more, got 0"),  # not n_samples
    ],
)
def test_compare_command_refuses_bad_input_in_one_line(tmp_path, capsys, files, flags, message):
    from fastbertscore.cli.main import main

    (tmp_path / "sub").mkdir()
    paths = {name: _write(tmp_path, name, lines) for name, lines in files.items()}
    ref = _write(tmp_path, "ref.txt", ["r1", "r2"])
    code = main(["compare", "-r", str(ref), *map(str, paths.values()), *flags, "-m", "no-such-org/no-such-model"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    for name, path in paths.items():
        message = message.replace("{" + name + "}", str(path))
    assert message in err


@pytest.mark.slow
def test_compare_command_on_a_whole_shared_test_set(tmp_path, capsys):
    """Every system of WMT22 liv-en (the smallest test set of the WMT file) against its references."""
    from paths import SHARED_RATINGS

    from fastbertscore.cli.main import main

    if not SHARED_RATINGS.exists():
        pytest.skip("benchmarks/data/human_judgments_toen.tsv is absent (python benchmarks/wmt_data.py builds it)")
    with open(SHARED_RATINGS, encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["lp"] == "liv-en"]
    outputs, refs = wmt_systems_of(rows)
    files = [_write(tmp_path, f"{name}.txt", lines) for name, lines in outputs.items()]
    ref = _write(tmp_path, "ref.txt", refs)
    assert main(["compare", "-r", str(ref), *map(str, files), "--paired-bs", "--format", "json", "-m", MINILM]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["systems"]) == [f.name for f in files] and len(files) >= 2
    assert all(
        0 <= row["f1_ci"] < 0.1 and (row["p_value"] is None) == (name == files[0].name)
        for name, row in out["systems"].items()
    )


@pytest.mark.parametrize(
    ("label", "said"),
    [
        ("oops", "label must be a callable"),
        (lambda s: s, "label must be a callable"),
        (lambda s, i, k: 1, "return a str"),
    ],
)
def test_a_bad_label_is_refused_before_any_model_work(label, said):
    # the model folder does not exist: the label's error comes first, not the model's (nor late, at a warning)
    with pytest.raises(TypeError, match=said):
        fb.compare({"A": ["x", "y"], "B": ["y", "z"]}, ["r", "s"], model_type="/no/such/model", label=label)
