"""The docs hold to what the code does and what the results files say (rules: docs_figures.py, docs_behaviour.py,
docs_python.unbound_findings): figures match their results files, links reach what they are for, behaviours
name the tests that hold them, the pages speak to users, and the benchmarks run from a clone.

Every rule gives no finding on the real pages. Each of the 18 defects a newcomer's read found, fed back in the
words the pages used, gives one (DEFECTS), and its mended form gives none (MENDED)."""

from __future__ import annotations

import json
import re

import docs_behaviour as behaviour
import docs_code as code
import docs_figures as figures
import docs_rules as rules
import docs_statements as statements
import pytest
from docs_python import unbound_findings
from paths import REPO

PAGES = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    REPO / "ARCHITECTURE.md",
    REPO / "baselines" / "README.md",
    REPO / "benchmarks" / "data" / "README.md",
    REPO / "tests" / "data" / "README.md",
]
TEXT = (".md", ".py", ".txt", ".sh", ".json", ".csv")
CHANGELOG = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")


def read(path: str) -> str | None:
    """A text file of the repository by its path, or None."""
    file = REPO / path
    return file.read_text(encoding="utf-8") if file.is_file() and file.suffix in TEXT else None


def _name(page) -> str:
    return page.relative_to(REPO).as_posix()


RULES = {
    "figures match their results files": lambda text, page: figures.figure_findings(text, read),
    "links reach what they are for": lambda text, page: figures.link_findings(text, page, read),
    "outcomes given as figures": lambda text, page: figures.vague_findings(text),
    "tests named exist and say it": lambda text, page: behaviour.test_reference_findings(text),
    "the GPU run": lambda text, page: behaviour.gpu_run_findings(text, read("benchmarks/gpu_results.md")),
    "the current version": lambda text, page: behaviour.version_findings(text, code.version(), CHANGELOG),
    "settings without a flag": lambda text, page: behaviour.flag_claim_findings(text),
    "evaluate's evaluator": lambda text, page: behaviour.evaluator_findings(text),
    "counts of lists": lambda text, page: behaviour.count_findings(text),
    "commits a file names": lambda text, page: behaviour.commit_claim_findings(text, read),
    "the embedded model's install": lambda text, page: behaviour.embedded_install_findings(text),
    "install lines": lambda text, page: rules.install_findings(text, read("requirements.txt") or ""),
    "user words": lambda text, page: behaviour.user_word_findings(text),
    "benchmarks from a clone": lambda text, page: behaviour.clone_findings(text, read),
    "Python names": lambda text, page: unbound_findings(text),
}
#: Rules a page breaks outside the defects this test was written for, each with why (strict xfails: an entry that
#: passes fails, and goes). None is pending: a page that breaks a rule fails.
PENDING: dict[tuple[str, str], str] = {}


def _cases():
    for page in PAGES:
        for rule in RULES:
            reason = PENDING.get((_name(page), rule))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(page, rule, marks=marks, id=f"{_name(page)}: {rule}")


@pytest.mark.parametrize(("page", "rule"), list(_cases()))
def test_the_pages_hold_to_the_code_and_the_results(page, rule):
    findings = RULES[rule](page.read_text(encoding="utf-8"), _name(page))
    assert not findings, "\n".join(findings)


@pytest.mark.parametrize(
    "path", sorted((REPO / "benchmarks").glob("*.md")) + sorted((REPO / "docs").glob("metaeval_*.md")), ids=_name
)
def test_results_files_keep_machine_versions_date_and_command_only(path):
    """No history, issue numbers, clock times, internal targets or paths outside the clone in a results file."""
    text = path.read_text(encoding="utf-8")
    assert not statements.history_findings(text) + behaviour.user_word_findings(text)


@pytest.mark.parametrize(
    "path", sorted((REPO / "benchmarks").glob("*.py")) + sorted((REPO / "benchmarks").glob("*.sh")), ids=_name
)
def test_benchmarks_read_nothing_outside_the_clone(path):
    assert not behaviour.outside_reads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "path", [*sorted((REPO / "fastbertscore" / "data").glob("*.tsv")), REPO / "baselines" / "manifest.json"], ids=_name
)
def test_shipped_data_names_no_path_outside_the_clone(path):
    """Provenance in the files the package ships names the clone's paths (``benchmarks/data/...``), not ours."""
    text = path.read_text(encoding="utf-8")
    assert not [m[0] for m in behaviour.OUTSIDE.finditer(text)] + re.findall(r"(?<![\w/])shared/data/\S+", text)


def test_the_module_card_and_its_messages_hold_to_the_code():
    card = behaviour.module_card((REPO / "bertscore.py").read_text(encoding="utf-8"))
    findings = statements.evaluate_route_findings(card) + behaviour.embedded_install_findings(card)
    assert not findings + behaviour.user_word_findings(card)


def test_the_dataset_card_counts_what_the_manifest_lists():
    card = (REPO / "baselines" / "README.md").read_text(encoding="utf-8")
    manifest = json.loads((REPO / "baselines" / "manifest.json").read_text(encoding="utf-8"))
    assert not behaviour.card_count_findings(card, manifest) + behaviour.count_findings(card)


def test_the_changelog_says_nothing_is_unrun_that_ran():
    assert not behaviour.gpu_run_findings(CHANGELOG, read("benchmarks/gpu_results.md"))


#: The guides a newcomer looks for, each with what it must say.
GUIDES = {
    "offline.md": ("roberta-large", "1.4 GB", "HF_HUB_OFFLINE", "snapshot_download"),
    "deploy.md": ("requirements.txt", "hf upload", 'evaluate.load("ORG/bertscore"', "FASTBERTSCORE_SPACE_MODELS"),
    "publishing.md": ("hf auth login", "HF_TOKEN", "manifest.json", "LAYER,P,R,F", "bertscore-baseline push"),
    "reporting.md": ("hashcode", "layer", "baseline", "model", "signature"),
    "compare.md": ("bertscore compare", "Signature:"),
}


@pytest.mark.parametrize("guide", list(GUIDES))
def test_the_guides_exist_say_what_they_are_for_and_are_in_the_nav(guide):
    text = (REPO / "docs" / guide).read_text(encoding="utf-8")
    assert [must for must in GUIDES[guide] if must not in text] == []
    assert guide in (REPO / "mkdocs.yml").read_text(encoding="utf-8")


def test_readme_stays_a_card_and_the_license_is_the_one_pyproject_names():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 250
    assert 'license = { text = "MIT" }' in (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert (REPO / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


OLD_TESTS_DATA_README = """`wmt_toen_sample.tsv`: the header and first 120 rows of `human_judgments_toen.tsv`. That file is built from the
public repositories `wmt-conference/wmt21-news-systems` (commit `f41750da`) and `wmt-conference/wmt22-news-systems`;
its README gives the columns, the quoting and the provenance."""
OLD_RECIPE = """```python
import numpy as np
import fastbertscore as fb

scorer = fb.BERTScorer(model_type="sentence-transformers/all-MiniLM-L6-v2")


def compute_metrics(eval_pred, tokenizer=tokenizer):
    predictions, labels = eval_pred
    return {"bertscore_f1": scorer.score(tokenizer.batch_decode(predictions), tokenizer.batch_decode(labels))[2]}


args = transformers.Seq2SeqTrainingArguments("out", predict_with_generate=True, eval_strategy="epoch")
```
"""
OLD_CARD = '''"""Loading it needs the fastbertscore package importable (install it from a clone of its repository: pip install
-e .); load this file by its path."""
_KWARGS = """model_type (str): model id or local folder, e.g. "sentence-transformers/all-MiniLM-L6-v2" (embedded, offline)."""
'''
OLD_CLASS_DOC = '''class BERTScore:
    """``evaluate.load("bertscore", model_type=..., num_layers=...)``: keywords given at load time are this
    module's defaults."""

    def __init__(self, name):
        raise TypeError(f"evaluate.load('bertscore') got an unexpected keyword argument {name!r}")
'''
GPU = read("benchmarks/gpu_results.md")

#: defect → (the rule, the defect in the words the pages used, a part of the finding it must give)
DEFECTS = {
    "1 scoring.md: pairwise/mbr ignore memory_mb": (
        behaviour.test_reference_findings,
        (
            "- `pairwise()`, `mbr()` and `bertscore pairwise` take the option but do not use it: all-vs-all matching "
            "holds\n  every embedding of its two lists at once and matches them in blocks of its own."
        ),
        "name the test that shows it",
    ),
    "2 allpairs.md: not run on a GPU yet": (
        lambda t: behaviour.gpu_run_findings(t, GPU),
        (
            "These figures are from a CPU; on a GPU the encoder pass is far cheaper (not measured: all-pairs matching "
            "has not run on a GPU yet)."
        ),
        "reports tests/test_gpu.py on a GPU",
    ),
    "3 reliability.md: a folder in an entry's place turns the cache off (with the test that holds it)": (
        behaviour.test_reference_findings,
        (
            "| an entry cannot be read (`PermissionError`, an entry that is a folder; any `OSError` but a missing file) "
            "| one warning, then no cache for that scorer (`tests/cache/test_disk_cache_crafted.py::"
            "test_something_other_than_a_file_in_an_entrys_place_is_a_miss_and_never_blocks`) |"
        ),
        "does not say",
    ),
    "4 reliability.md: the same p95, RSS did not grow": (
        figures.vague_findings,
        (
            "Under a hostile user looping over the worst of these (`python benchmarks/load_space.py --hostile`, in\n"
            "[The Space](space.md#under-hostile-load)), two normal users saw no failure and the same p95, every "
            "hostile request\nwas refused, and the app's RSS did not grow."
        ),
        "'the same p95': give the figure",
    ),
    "5 speed.md: memory_mb linked to scale.md": (
        lambda t: figures.link_findings(t, "docs/speed.md", read),
        "A sixteenth keeps the cache inside the budget, so the bound that\n[memory_mb](scale.md) states still holds.",
        "docs/scale.md never mentions memory_mb",
    ),
    "6 speed.md: float32's 1.18× now": (
        behaviour.user_word_findings,
        (
            '| `dtype="auto"` → bfloat16 only where it measures ≥ 1.3× float32 | AVX512-BF16 Xeon, no AMX | '
            "roberta-large shape: 0.69× bert-score with bfloat16, float32's 1.18× now | yes |"
        ),
        "'× now'",
    ),
    "6 speed.md: 1.18× quoted from the results file": (
        lambda t: figures.figure_findings(t, read),
        "roberta-large shape (`benchmarks/large_model_results.md`): float32's 1.18× bert-score",
        "1.18: not in benchmarks/large_model_results.md",
    ),
    "7 speed.md: how to measure without the data": (
        lambda t: behaviour.clone_findings(t, read),
        "```bash\npip install -r requirements-bench.txt && python benchmarks/speed.py   # all workloads\n```\n",
        "show `python benchmarks/wmt_data.py` first",
    ),
    "7 the benchmarks read ../shared": (
        behaviour.outside_reads,
        'DATA = HERE.parent.parent / "shared" / "data" / "human_judgments_toen.tsv"',
        "outside the clone",
    ),
    "8 CHANGELOG 0.3.0: not yet run on a GPU": (
        lambda t: behaviour.gpu_run_findings(t, GPU),
        (
            "- README's first screen says where it runs (CPU measured; CUDA written and dry-run on a CPU, not yet run on "
            "a GPU)."
        ),
        "reports tests/test_gpu.py on a GPU",
    ),
    "9 dataset card: pip install fastbertscore": (
        lambda t: rules.install_findings(t, read("requirements.txt") or ""),
        "## Add a baseline\n\n```bash\npip install fastbertscore\n```\n",
        "not on the package index",
    ),
    "10 dataset card: 11 languages, 12 listed": (
        behaviour.count_findings,
        "- **72 imported files** (11 languages: cs, de, en, en-sci, es, et, fi, fr, it, lv, pt, zh): the baselines",
        "11 languages: the list has 12",
    ),
    "11 agreement.md: tests/data/README.md names the commits": (
        lambda t: behaviour.commit_claim_findings(t, lambda path: OLD_TESTS_DATA_README),
        (
            "It is built from the public repositories `wmt-conference/wmt21-news-systems` and "
            "`wmt-conference/wmt22-news-systems`, and `tests/data/README.md` names the commits."
        ),
        "names no commit of wmt-conference/wmt22-news-systems",
    ),
    "12 integrations.md: the Seq2SeqTrainer recipe never imports transformers": (
        unbound_findings,
        OLD_RECIPE,
        "transformers: used before it is imported or defined",
    ),
    "13 README: 1.5–1.7× on the AMX Xeon": (
        lambda t: figures.link_findings(t, "README.md", read),
        (
            "- **CPU, measured**: the figures above, and on an Intel Xeon with AMX (2 cores, 2026-11-22) exact mode at "
            '1.5–1.7×\n  bert-score and `dtype="bfloat16"` at 2.3–2.5× ([speed and memory](docs/speed.md)).'
        ),
        "1.5–1.7× is on no page it links",
    ),
    "13 speed.md: 1.5–1.7× beside its results file": (
        lambda t: figures.figure_findings(t, read),
        "On the AMX CPU (`benchmarks/results_amx.md`), exact mode is 1.5–1.7× `bert-score` with the same scores.",
        "leaves out fastbertscore's 0.98, 1.33×",
    ),
    "14 reliability.md: where the suite has run is 0.2.0": (
        lambda t: behaviour.version_findings(t, code.version(), CHANGELOG),
        (
            "**Where the suite has run, by CPU class.** The suite of 0.2.0 ran on an AVX2-only AMD EPYC, both on its "
            "native kernels and on the second numeric path."
        ),
        "0.2.0: the package is",
    ),
    "15 metric card: pip install -e . gives the embedded model offline": (
        lambda t: behaviour.embedded_install_findings(behaviour.module_card(t)),
        OLD_CARD,
        "installs no embedded model",
    ),
    "16 bertscore.py: evaluate.load('bertscore') in its docstring and error": (
        lambda t: statements.evaluate_route_findings(behaviour.module_card(t)),
        OLD_CLASS_DOC,
        "loads evaluate's own module",
    ),
    "17 README: plus every setting": (
        behaviour.flag_claim_findings,
        "**Command line.** `bertscore` takes the `bert-score` CLI's flags with the same meaning, plus every setting:",
        "all_layers have no flag",
    ),
    "17 cli.md: every other setting is a flag": (
        behaviour.flag_claim_findings,
        "Every other setting is a flag too, made from `fastbertscore.Settings` (`--device`, `--dtype`).",
        "all_layers have no flag",
    ),
    "18 README: works with evaluate.evaluator": (
        behaviour.evaluator_findings,
        "The evaluate module works with `evaluate.evaluator`, evaluate's distributed mode and `evaluate.combine`.",
        "needs a workaround on transformers 5",
    ),
}


@pytest.mark.parametrize("defect", list(DEFECTS))
def test_each_defect_a_newcomer_found_is_found_again(defect):
    rule, text, expected = DEFECTS[defect]
    findings = rule(text)
    assert any(expected in f for f in findings), f"{defect!r} is no longer seen: {findings}"


#: The mended forms (as the pages say them now): the same rule gives no finding.
MENDED = {
    "1": (
        behaviour.test_reference_findings,
        (
            "- `pairwise()`, `mbr()` and `bertscore pairwise` keep their embeddings under the same budget: past it they "
            "spill to disk and their similarity blocks shrink, and a small budget changes no number "
            "(`tests/test_matrix.py::test_a_small_memory_budget_spills_and_changes_no_number`)."
        ),
    ),
    "3": (
        behaviour.test_reference_findings,
        (
            "| something other than a file in an entry's place (a folder, a named pipe) | a warning naming it; that "
            "entry is a miss and is recomputed, never blocks, and the cache stays on (`tests/cache/"
            "test_disk_cache_crafted.py::test_something_other_than_a_file_in_an_entrys_place_is_a_miss_and_never_blocks`) |"
        ),
    ),
    "11": (
        lambda t: behaviour.commit_claim_findings(t, read),
        (
            "`python benchmarks/wmt_data.py` builds it from `wmt-conference/wmt21-news-systems` and "
            "`wmt-conference/wmt22-news-systems`, and `benchmarks/data/README.md` names the commits."
        ),
    ),
    "13": (
        lambda t: figures.figure_findings(t, read),
        "On the AMX CPU (`benchmarks/results_amx.md`), exact mode is 0.98–1.66× `bert-score` by workload.",
    ),
    "17": (
        behaviour.flag_claim_findings,
        "Every other setting but `all_layers` and `idf_sents` (Python only) is a flag too.",
    ),
}


@pytest.mark.parametrize("case", list(MENDED))
def test_the_mended_forms_give_no_finding(case):
    rule, text = MENDED[case]
    assert not rule(text)
