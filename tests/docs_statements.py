"""More rules of tests/test_docs_claims.py: what the pages state about versions, figures, models and the metric card,
held to the CHANGELOG, the results files and the package; and no history (issue numbers, clock times, notes on how
the work was done) where a user reads. Each is a function from text to findings, one sentence each."""

from __future__ import annotations

import ast
import re

import docs_code as code
import docs_text as md
from docs_rules import CLOCK, INTERNAL, ISSUE, MACHINES


def history_findings(text: str, headings_only: bool = False) -> list[str]:
    """No issue numbers of ours (another project's, named, may be cited), clock times or notes on how the work was
    done ("this VM", "run 3", "session", "lent"); for a CHANGELOG, issue numbers anywhere and the rest in
    headings."""
    found = []
    for line in text.splitlines():
        heading = line.startswith("#") and not line.startswith("#!")
        for m in ISSUE.finditer(line):
            owner = m[1] or m[3] or ""
            if code.normalized(owner) not in {code.normalized(n) for n in code.libraries()}:
                found.append(f"{m[0].strip()!r}: an issue number of ours ({line.strip()[:80]})")
        if headings_only and not heading:
            continue
        found += [f"{m[0]!r}: a clock time ({line.strip()[:80]})" for m in CLOCK.finditer(md.prose(line))]
        found += [f"{m[0]!r}: a note on how the work was done ({line.strip()[:80]})" for m in INTERNAL.finditer(line)]
    return found


def changelog_findings(changelog: str, version: str) -> list[str]:
    """The CHANGELOG has a dated section for the package's version; sections are Unreleased (at the top) or
    released versions, newest first, each saying first what changes numbers or hashes."""
    found = []
    heads = re.findall(r"^## (.+)$", changelog, re.MULTILINE)
    released = [re.fullmatch(r"(\d+)\.(\d+)\.(\d+) \((\d{4}-\d\d-\d\d)\)", h) for h in heads]
    for i, (head, m) in enumerate(zip(heads, released, strict=True)):
        if m is None and not (head == "Unreleased" and i == 0):
            found.append(f"## {head}: a section is 'Unreleased' (the first) or 'X.Y.Z (YYYY-MM-DD)'")
    versions = [m for m in released if m]
    if version not in {".".join(m.groups()[:3]) for m in versions}:
        found.append(f"no '## {version} (date)' section, though fastbertscore/_version.py says {version}")
    keys = [(tuple(map(int, m.groups()[:3])), m[4]) for m in versions]
    if keys != sorted(keys, reverse=True):
        found.append("released versions (and their dates) are not newest first")
    for part in re.split(r"^## ", changelog, flags=re.MULTILINE)[1:]:
        if re.match(r"\d", part) and not re.search(r"^### What changes numbers or hashes$", part, re.MULTILINE):
            found.append(f"## {part.splitlines()[0]}: no '### What changes numbers or hashes' section")
    return found + history_findings(changelog, headings_only=True)


def _machine_words(text: str) -> set[str]:
    return {w.replace("AVX-512", "AVX512") for w in MACHINES if w in text}


def figure_findings(text: str, read_results) -> list[str]:
    """A page that cites a results file (benchmarks/*.md) says, beside it, the date it was measured, the machine it
    ran on and, where the file names it, the fastbertscore version that was measured."""
    found = []
    blocks = [b for kind, _, b in md.segments(text) if kind == "prose"]
    for i, block in enumerate(blocks):
        for name in re.findall(r"benchmarks/([\w.-]+\.md)", block):
            results = read_results(name)
            if results is None:
                continue  # a missing file is path_findings' to report
            near = " ".join(blocks[max(i - 1, 0) : i + 2])
            dates = set(re.findall(r"\d{4}-\d\d-\d\d", results))
            if dates and not any(d in near for d in dates):
                found.append(f"benchmarks/{name} is cited without its date ({', '.join(sorted(dates))})")
            versions = set(re.findall(r"fastbertscore (\d+\.\d+\.\d+)", results))
            if versions and not any(v in near for v in versions):
                found.append(f"benchmarks/{name} is cited without the version it measured ({', '.join(versions)})")
            machines = _machine_words(results)
            if machines and not machines & _machine_words(near.replace("AVX-512", "AVX512")):
                found.append(f"benchmarks/{name} is cited without its machine ({', '.join(sorted(machines))})")
    return found


def evaluate_route_findings(text: str) -> list[str]:
    """Where a page names evaluate.load("bertscore"), it says that this loads evaluate's own module (the examples
    themselves load this repository's module by its path: docs_python)."""
    return [
        f"{s[:100]!r}: evaluate.load('bertscore') loads evaluate's own module; say so, or load the file by its path"
        for s in md.sentences(text)
        if re.search(r"""evaluate\.load\(\s*["']bertscore["']""", s)
        and not re.search(r"evaluate's own|evaluate-metric/bertscore", s)
    ]


def language_findings(text: str) -> list[str]:
    """A language paired with a default model gets the model the package picks for it, and a sentence that sends
    "other" languages to multilingual BERT names every language with a model of its own (or LANG2MODEL)."""
    from fastbertscore import LANG2MODEL
    from fastbertscore.models.defaults import MULTILINGUAL_MODEL, model_for_lang

    models = set(LANG2MODEL.values()) | {MULTILINGUAL_MODEL}
    found = []
    for sentence in md.sentences(text):
        for lang, model in re.findall(r'"([a-z]{2,3}(?:-[a-z]+)?)"`?\s*(?:[\w\']+\s+){0,2}`([^`]+)`', sentence):
            if model in models and model_for_lang(lang) != model:
                found.append(f'"{lang}" {model}: the package picks {model_for_lang(lang)}')
        if re.search(r"\bother\b[^.]*\b(?:mBERT|multilingual)", sentence) and "LANG2MODEL" not in sentence:
            missing = [k for k in LANG2MODEL if f'"{k}"' not in sentence]
            if missing:
                found.append(f"{sentence[:90]!r}: also has its own model: {', '.join(missing)}")
    return found


def first_screen_findings(readme: str) -> list[str]:
    """README's first screen (after the Space's front matter, up to the section after "Where it runs") fits 40
    lines, shows the evaluate route (the module loaded by its path) and says where it runs: the CPU with a dated
    figure, CUDA, and the commands that measure it on a GPU."""
    lines = md.body(readme).splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("## ")]
    where = [i for i in heads if lines[i].startswith("## Where it runs")]
    if not where:
        return ["README has no '## Where it runs' section"]
    end = next((i for i in heads if i > where[0]), len(lines))
    screen = "\n".join(lines[:end]).rstrip()
    found = [f"the first screen is {screen.count(chr(10)) + 1} lines (at most 40)"] if screen.count("\n") >= 40 else []
    musts = ("CUDA", "GPU", "gpu_run.sh pack", "gpu_run.sh tests", "`all`", "python -m pytest", "CPU")
    for must in (*musts, 'evaluate.load("./bertscore.py")'):
        if must not in screen:
            found.append(f"the first screen does not say {must!r}")
    if not re.search(r"\d{4}-\d\d-\d\d", screen):
        found.append("the first screen's figures name no date")
    return found


def card_findings(names: set[str]) -> list[str]:
    """A metric card's inputs name every option of the module and no other."""
    accepted = code.keyword_names() | {"predictions", "references", "verbose"}
    found = [f"the card documents {n!r}, which the module does not take" for n in sorted(names - accepted)]
    return found + [f"the card does not document {n!r}" for n in sorted(accepted - names)]


def card_arg_names(module_source: str) -> set[str]:
    """The inputs that bertscore.py's _KWARGS_DESCRIPTION lists under Args (its text as the module makes it: written
    there, with the settings' lines from ``fastbertscore.Settings.options_doc``)."""
    import fastbertscore

    tree = ast.parse(module_source)
    value = next(
        n.value
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_KWARGS_DESCRIPTION"
    )
    # the expression alone, on the package alone: the module itself would import evaluate and datasets
    text = eval(compile(ast.Expression(value), "bertscore.py", "eval"), {"fastbertscore": fastbertscore})
    args = text.split("Args:", 1)[1].split("Returns:", 1)[0]
    return {n for line in re.findall(r"^ {4}(\w+(?:, \w+)*) \(", args, re.MULTILINE) for n in line.split(", ")}


def readme_input_names(readme: str) -> set[str]:
    """The inputs README's metric card lists (the names in its "### Inputs" section)."""
    section = readme.split("### Inputs", 1)[1].split("\n### ", 1)[0]
    return {s for s in md.spans(section) if re.fullmatch(r"[a-z_]+", s)}
