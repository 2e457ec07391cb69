"""Every public path gives ``score()``'s numbers: over drawn combinations of options (idf off / on / a mapping,
rescaling, all layers, several references, long texts through windows, batch sizes 1, 7 and 64), each entry point
equals ``score()`` on the same texts within the tolerance policy, or refuses the combination with an error that
names it. (torchrun and Ray are held to ``score()`` in tests/scale/, on one combination each: a process group per
drawn example would cost minutes.)"""

from __future__ import annotations

from collections import defaultdict

import evaluate
import pytest
import torch
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from paths import (
    MINILM,
    REPO,
)
from tolerances import PRINTED_6, assert_close, assert_scores_close, prf_bounds

import fastbertscore as fb
from fastbertscore.cli.main import main as cli_main
from fastbertscore.explanations.explanation import split_sentences
from fastbertscore.integrations.torchmetrics import BERTScore
from fastbertscore.pipeline.budget import forced_batch_size

LAYER = 4

OPTIONS = st.fixed_dictionaries(
    {
        "idf": st.sampled_from(["off", "on", "mapping"]),
        "rescale": st.booleans(),
        "all_layers": st.booleans(),
        "multi_ref": st.booleans(),
        "window": st.booleans(),
        "batch_size": st.sampled_from([1, 7, 64]),
    }
)


class Case:
    """One drawn combination: the texts, the settings as keywords, and score()'s numbers on them."""

    def __init__(self, drawn: dict, mt_pairs):
        cands, refs = list(mt_pairs[0][:5]), list(mt_pairs[1][:5])
        if drawn["window"]:  # a text past the model's 512 tokens (1,095: three windows), scored in full
            cands[1] = " ".join(mt_pairs[0][:40])
        self.cands = cands
        self.refs = [[r, mt_pairs[0][i + 6]][: 1 + i % 2] for i, r in enumerate(refs)] if drawn["multi_ref"] else refs
        self.flat = [r for item in self.refs for r in ([item] if isinstance(item, str) else item)]
        mapping = defaultdict(lambda: 1.0, {1996: 2.0, 1037: 0.5, 2003: 3.0, 101: 0.0, 102: 0.0})  # "the", "a", "is"
        idf = {"off": False, "on": True, "mapping": mapping}[drawn["idf"]]
        self.options = {
            "model_type": MINILM,
            "num_layers": LAYER,
            "idf": idf,
            "all_layers": drawn["all_layers"],
            "long_inputs": "window" if drawn["window"] else "truncate",
        }
        if drawn["rescale"]:
            self.options.update(lang="en", rescale_with_baseline=True)
        self.batch_size = drawn["batch_size"]
        self.tokens = 2048 if drawn["window"] else 512
        self.expected = fb.score(self.cands, self.refs, batch_size=self.batch_size, **self.options)
        self.scorer = fb.BERTScorer(**self.options, **self._idf_sents(self.flat))
        self.baseline = self.scorer.baseline_vals if drawn["rescale"] else None

    def _idf_sents(self, sents) -> dict:
        return {"idf_sents": sents} if self.options["idf"] is True else {}

    def close(self, ours, expected=None, what: str = "") -> None:
        expected = self.expected if expected is None else expected
        baseline = self.baseline
        if baseline is not None and self.options["all_layers"]:
            baseline = baseline.reshape(-1, 3)
        assert_scores_close(ours, expected, baseline=baseline, tokens=self.tokens, what=f"{what}: ")

    def one_layer(self, values):
        """The scorer's own layer of ``(L + 1, ...)`` values, or the values themselves."""
        return values[LAYER] if self.options["all_layers"] else values

    def bound(self, k: int) -> float:
        b = (
            self.baseline.reshape(-1, 3)[LAYER if self.options["all_layers"] else 0]
            if self.baseline is not None
            else None
        )
        return (
            float(prf_bounds(baseline=b, tokens=self.tokens)[k].max())
            if b is not None
            else prf_bounds(tokens=self.tokens)[k]
        )


def _scorer_paths(case: Case) -> None:
    case.close(case.scorer.score(case.cands, case.refs, batch_size=case.batch_size), what="BERTScorer.score")
    result = case.scorer.score_result(case.cands, case.refs, batch_size=case.batch_size)
    case.close((result.precision, result.recall, result.f1), what="score_result")
    out = fb.compute(predictions=case.cands, references=case.refs, batch_size=case.batch_size, **case.options)
    if not case.options["all_layers"]:
        case.close([torch.tensor(out[k]) for k in ("precision", "recall", "f1")], what="compute")


def _evaluate_path(case: Case) -> None:
    if case.options["all_layers"]:
        return  # evaluate's features are lists of floats per prediction: all_layers is for Python callers
    metric = evaluate.load(str(REPO / "bertscore.py"))
    out = metric.compute(predictions=case.cands, references=case.refs, batch_size=case.batch_size, **case.options)
    case.close([torch.tensor(out[k]) for k in ("precision", "recall", "f1")], what="evaluate.load")


def _cli_path(case: Case, tmp_path, capsys) -> None:
    if case.options["all_layers"] or isinstance(case.options["idf"], dict):
        return  # neither has a flag: the command line scores one layer with idf on or off
    cand = tmp_path / "cand.txt"
    cand.write_text("\n".join(case.cands) + "\n", encoding="utf-8")
    columns = [[item] if isinstance(item, str) else item for item in case.refs]
    ref_files = []
    for k in range(max(len(c) for c in columns)):
        path = tmp_path / f"ref{k}.txt"
        path.write_text("\n".join(c[k] if k < len(c) else c[0] for c in columns) + "\n", encoding="utf-8")
        ref_files.append(str(path))
    argv = [
        "-c",
        str(cand),
        "-r",
        *ref_files,
        "-m",
        MINILM,
        "-l",
        str(LAYER),
        "-b",
        str(case.batch_size),
        "-s",
        "--long_inputs",
        case.options["long_inputs"],
        "--output",
        "json",
    ]
    argv += ["--idf"] if case.options["idf"] is True else []
    argv += ["--lang", "en", "--rescale_with_baseline"] if "lang" in case.options else []
    assert cli_main(argv) == 0
    import json

    pairs = json.loads(capsys.readouterr().out)["pairs"]
    # A reference repeated to fill a column changes neither the best reference nor idf's document counts much:
    # compare with score() on exactly the references the files hold.
    refs = [[c[k] if k < len(c) else c[0] for k in range(len(ref_files))] for c in columns]
    expected = fb.score(case.cands, refs, batch_size=case.batch_size, **case.options)
    for k, name in enumerate(("P", "R", "F1")):
        assert_close([p[name] for p in pairs], expected[k], case.bound(k) + PRINTED_6, f"CLI {name}")


def _matrix_paths(case: Case) -> None:
    expanded = [
        (c, r)
        for c, item in zip(case.cands, case.refs, strict=True)
        for r in ([item] if isinstance(item, str) else item)
    ]
    cands, refs = [c for c, _ in expanded], [r for _, r in expanded]
    idf_over = {"idf_sents": case.flat} if case.options["idf"] is True else {}
    single = fb.BERTScorer(**case.options, **idf_over).score(cands, refs)
    P, R, F = fb.pairwise(case.cands, case.flat, batch_size=case.batch_size, **case.options)
    rows = [case.cands.index(c) for c in cands]
    cols = [case.flat.index(r) for r in refs]
    case.close([m[..., rows, cols] for m in (P, R, F)], single, what="pairwise entries")
    if case.options["all_layers"]:
        with pytest.raises(ValueError, match="mbr needs one layer.*all_layers=True"):
            fb.mbr([case.cands], [case.flat], **case.options)
        return
    picks = fb.mbr([case.cands], [case.flat], batch_size=case.batch_size, **case.options)
    assert_close(picks.utilities[0], F.mean(dim=1), case.bound(2), "mbr utilities")


def _compare_path(case: Case) -> None:
    systems = {"A": case.cands, "B": case.cands[::-1]}
    if case.options["all_layers"]:
        with pytest.raises(ValueError, match="compare\\(\\) needs one layer.*all_layers=True"):
            fb.compare(systems, case.refs, test=None, **case.options)
        return
    result = fb.compare(systems, case.refs, test=None, batch_size=case.batch_size, **case.options)
    for k, name in enumerate(("precision", "recall", "f1")):
        assert_close(result.to_dict()["A"][name], case.expected[k].double().mean(), case.bound(k), f"compare {name}")


def _explain_paths(case: Case) -> None:
    cand, ref = case.cands[0], case.flat[0]
    expected = fb.score([cand], [ref], **case.options)
    for level in ("token", "word", "sentence"):
        e = fb.explain(cand, ref, level=level, batch_size=case.batch_size, **case.options)
        for k, value in enumerate((e.precision, e.recall, e.f1)):
            assert_close(value, case.one_layer(expected[k])[0], case.bound(k), f"explain({level!r}) {'PRF'[k]}")
    # Sentence values: each candidate sentence's precision against the whole reference, as score() gives it.
    sentences = [cand[a:b] for a, b in split_sentences(cand)]
    idf_over = {"idf_sents": [ref]} if case.options["idf"] is True else {}
    per_sentence = fb.BERTScorer(**case.options, **idf_over).score(sentences, [ref] * len(sentences))[0]
    values = [u.similarity for u in e.candidate_units]
    assert_close(values, case.one_layer(per_sentence), case.bound(0), "explain sentence precision")


def _torchmetrics_path(case: Case) -> None:
    idf = case.options["idf"]
    options = {k: v for k, v in case.options.items() if k not in ("model_type", "idf")}
    metric = BERTScore(model_name_or_path=MINILM, idf=idf, batch_size=case.batch_size, **options)
    metric.update(case.cands[:2], case.refs[:2])
    metric.update(case.cands[2:], case.refs[2:])
    out = metric.compute()
    case.close((out["precision"], out["recall"], out["f1"]), what="torchmetrics")


#: The two fixed combinations past 512 tokens (three windows), which every run holds each path to.
WINDOWS = (
    {"idf": "on", "rescale": True, "all_layers": False, "multi_ref": True, "window": True, "batch_size": 64},
    {"idf": "mapping", "rescale": False, "all_layers": False, "multi_ref": False, "window": True, "batch_size": 64},
)
#: With the windows, every value of every option once: idf off, all layers and short texts.
SHORT_ALL_LAYERS = {
    "idf": "off",
    "rescale": True,
    "all_layers": True,
    "multi_ref": True,
    "window": False,
    "batch_size": 1,
}
#: .ci/run's second numeric path forces every encoder batch to one size, so the drawn batch sizes are all the same
#: there: it runs the fixed combinations alone, which take every entry point (the command line and evaluate in the
#: first window one) and every value of every option, instead of six draws more.
FORCED = forced_batch_size() is not None


def drawn_combinations(test):
    """The drawn combinations of options that each path below is held to, and the fixed ones above."""
    fixed = [*WINDOWS, SHORT_ALL_LAYERS] if FORCED else list(WINDOWS)
    for decorate in (
        *(example(drawn=drawn) for drawn in fixed),
        given(drawn=OPTIONS),
        settings(
            max_examples=6,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
            phases=[Phase.explicit] if FORCED else list(Phase),
        ),
        pytest.mark.every_path,
        pytest.mark.slow,
    ):
        test = decorate(test)
    return test


# The paths are split in three tests over the same draws (derandomized), so that xdist's workers share them and
# none takes a minute.
@drawn_combinations
def test_the_scorer_evaluate_and_torchmetrics_equal_score(drawn, mt_pairs):
    case = Case(drawn, mt_pairs)
    _scorer_paths(case)
    _evaluate_path(case)
    _torchmetrics_path(case)


@drawn_combinations
def test_the_command_line_and_explain_equal_score(drawn, mt_pairs, tmp_path_factory, capsys):
    case = Case(drawn, mt_pairs)
    _cli_path(case, tmp_path_factory.mktemp("cli"), capsys)
    _explain_paths(case)


@drawn_combinations
def test_pairwise_mbr_and_compare_equal_score(drawn, mt_pairs):
    case = Case(drawn, mt_pairs)
    _matrix_paths(case)
    _compare_path(case)
