"""Rules of tests/test_docs_behaviour.py about what the pages say the code does, where it ran and what it needs:
a behaviour names the test that holds it (and says what the test's name says); a claim about every setting, the
GPU run, the version, a count, the commits a file names or an install line is held to the code and files; the
pages speak to users (no history, internal targets or paths outside the clone); the benchmarks run from a clone.
Each is a function from text to findings, one sentence each."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

import docs_code as code
import docs_text as md

Read = Callable[[str], "str | None"]

TEST_REF = re.compile(r"\b(tests/[\w/]+\.py)::(\w+)")
#: A sentence that says something takes an option and does nothing with it.
UNUSED = re.compile(r"\b(?:take[s]? the option but|do(?:es)? not use (?:it|the option)|ignores? (?:the option|`\w+`))")
NOT_ON_GPU = re.compile(
    r"\b(?:(?:has|have|was|were) not (?:yet )?(?:been )?run on a GPU|not yet (?:been )?run on a GPU|no GPU has run)",
    re.IGNORECASE,
)
#: Words for how the work was done, not for what a user gets.
HISTORY = re.compile(
    r"\bas in \d+\.\d+\.\d+|\bbefore the (?:fix|change)\b|(?<=\d)× now\b|\bgoals?\b|\btargets? (?:is|of|at|within|≤)"
    r"|\(target\b|\bstand-ins?\b|\bMiB limit\b|\bthe issue's\b|\b[Rr]uns? \d+\b(?=[,;:)])|\blent\b",
)
OUTSIDE = re.compile(r"(?<![\w.])\.\./[\w.-]+|(?<![\w.])/(?:work|home|tmp|root)/\S+")
STOP = {"test", "the", "and", "its", "with", "are", "for", "not", "one", "that", "past", "into", "from", "than"}


def _units(text: str) -> list[str]:
    """The page's list items, table rows and sentences (a unit a claim and its test reference share)."""
    return [
        u for block in re.split(r"\n\s*\n", md.prose(text)) for u in re.split(r"\n(?=\s*(?:[-*] |\d+\. |\|))", block)
    ]


def _defined(path: str, name: str) -> bool:
    tree = ast.parse((code.REPO / path).read_text(encoding="utf-8"))
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.walk(tree))


def test_reference_findings(text: str) -> list[str]:
    """Every ``tests/x.py::test_name`` a page names exists, and the statement beside it says what the test's name
    says (at least half of its words); a statement that something ignores an option names the test that shows it."""
    found = []
    for unit in _units(text):
        words = {w[:4] for w in re.findall(r"[a-z0-9]+", TEST_REF.sub(" ", unit).lower().replace("_", " "))}
        for path, name in TEST_REF.findall(unit):
            if not (code.REPO / path).is_file() or not _defined(path, name):
                found.append(f"{path}::{name}: no such test")
                continue
            said = [w for w in name.removeprefix("test_").split("_") if len(w) > 2 and w not in STOP]
            unsaid = [w for w in said if w[:4] not in words]
            if len(unsaid) * 2 > len(said):
                found.append(f"{path}::{name}: the statement beside it does not say {', '.join(unsaid)}")
        if UNUSED.search(unit) and not TEST_REF.search(unit):
            found.append(f"{UNUSED.search(unit)[0]!r}: name the test that shows it ({unit.strip()[:70]!r})")
    return found


def gpu_run_findings(text: str, gpu_results: str | None) -> list[str]:
    """Nothing is said not to have run on a GPU while the GPU results file reports the GPU tests passing there."""
    ran = re.search(r"\*\*(\d+ passed)\*\*", gpu_results or "")
    return [
        f"{m[0]!r}: benchmarks/gpu_results.md reports tests/test_gpu.py on a GPU ({ran[1]})"
        for m in NOT_ON_GPU.finditer(" ".join(md.sentences(text)))
        if ran
    ]


def version_findings(text: str, current: str, changelog: str) -> list[str]:
    """A page speaks of the current version: a release of ours named as where things stand (``as in 0.2.0``, ``the
    suite of 0.2.0``) is history."""
    ours = set(re.findall(r"^## (\d+\.\d+\.\d+) ", changelog, re.MULTILINE)) - {current}
    pattern = re.compile(r"\b(?:fastbertscore|of|in|since|version|before|until|suite of) (\d+\.\d+\.\d+)\b")
    return [
        f"{m[1]}: the package is {current} ({s[:70]!r})"
        for s in md.sentences(text)
        for m in pattern.finditer(s)
        if m[1] in ours
    ]


def flag_claim_findings(text: str) -> list[str]:
    """A sentence that says every setting (option) is a flag names the settings that have none."""
    import dataclasses

    import fastbertscore as fb

    flagless = [f.name for f in dataclasses.fields(fb.Settings) if not f.metadata.get("flags")]
    found = []
    for sentence in md.sentences(text):
        if re.search(
            r"\bevery (?:other )?(?:setting|option)\b[^.;]{0,60}\bis a flag|\bplus (?:a flag for )?every (?:other )?(?:setting|option)\b",
            sentence,
            re.IGNORECASE,
        ):
            missing = [n for n in flagless if n not in sentence]
            if missing:
                found.append(f"{sentence[:70]!r}: {', '.join(missing)} have no flag; say so")
    return found


def evaluator_findings(text: str) -> list[str]:
    """A sentence that says the module works with ``evaluate.evaluator`` says what transformers 5 needs."""
    return [
        f"{s[:70]!r}: evaluate's evaluator needs a workaround on transformers 5 (docs/integrations.md); say so"
        for s in md.sentences(text)
        if re.search(r"evaluate\.evaluator|evaluate's evaluators?", s) and re.search(r"\bworks?\b", s)
        if "transformers 5" not in s
    ]


def count_findings(text: str) -> list[str]:
    """A count followed by its list (``11 languages: cs, de, …``) counts the list."""
    found = []
    for n, noun, items in re.findall(r"\b(\d+) ([a-z]+s)(?::| \()\s*([^):;\n]+(?:\n[^):;\n]+)?)", md.prose(text)):
        listed = [i for i in re.split(r",\s*|\s+and\s+", items.strip().rstrip(".")) if i]
        if len(listed) > 2 and all(len(i.split()) == 1 for i in listed) and len(listed) != int(n):
            found.append(f"{n} {noun}: the list has {len(listed)} ({', '.join(listed)})")
    return found


def commit_claim_findings(text: str, read: Read) -> list[str]:
    """A page that says a file names the commits of some repositories: that file names a commit beside each."""
    found = []
    for sentence in md.sentences(text):
        if not re.search(r"\b(?:names|gives|pins) the commits?\b", sentence):
            continue
        repos = [r for r in re.findall(r"`([\w-]+/[\w.-]+)`", sentence) if not code.repo_path_exists(r)]
        for path in re.findall(r"`([\w./-]+\.(?:md|py|txt))` (?:names|gives|pins) the commit", sentence):
            body = read(path) or ""
            for repo in set(repos):
                if not re.search(rf"{re.escape(repo)}[^\n]{{0,80}}\b[0-9a-f]{{7,40}}\b", body):
                    found.append(f"{path} names no commit of {repo}")
    return found


def embedded_install_findings(text: str) -> list[str]:
    """Where a text says the embedded model works offline, an install line it gives without the ``embedded`` extra
    says that it does not install that model."""
    if not re.search(r"embedded[^.]*\boffline|offline[^.]*\bembedded", text):
        return []
    return [
        f"{s[:70]!r}: pip install -e . installs no embedded model (the 'embedded' extra, or requirements.txt, does)"
        for s in md.sentences(text) + re.split(r"(?<=[.;:])\s+", text)
        for m in re.finditer(r"pip install -e '?\.(?:\[([\w,]+)\])?'?", s)
        if "embedded" not in (m[1] or "").split(",") and "embedded" not in s
    ][:1]


def user_word_findings(text: str) -> list[str]:
    """No history ("as in 0.2.0", "before the fix", "1.18× now"), internal targets or goals, packing details of
    our runs, or paths outside the clone where a user reads."""
    found = []
    for line in md.prose(text).splitlines():
        found += [f"{m[0]!r}: words for us, not users ({line.strip()[:70]})" for m in HISTORY.finditer(line)]
        words = re.sub(r"`[^`]*`", " ", line)  # a path in code is an example (`../../etc/passwd` refused)
        found += [f"{m[0]}: a path outside the clone ({line.strip()[:70]})" for m in OUTSIDE.finditer(words)]
    return found


def module_card(source: str) -> str:
    """The words of bertscore.py a user reads: its docstrings and every string it builds (error messages too)."""
    strings = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.append(node.value)
    return "\n\n".join(strings)


def card_count_findings(card: str, manifest: dict) -> list[str]:
    """The dataset card's counts of imported files and languages are the manifest's."""
    imported = [k for k, v in manifest["files"].items() if v.get("source") == "imported"]
    langs = {k.split("/", 1)[0] for k in imported}
    found = []
    for n in re.findall(r"\*\*(\d+) imported files\*\*", card):
        if int(n) != len(imported):
            found.append(f"{n} imported files: the manifest lists {len(imported)}")
    for n in re.findall(r"\((\d+) languages", card):
        if int(n) != len(langs):
            found.append(f"{n} languages: the imported files cover {len(langs)}")
    return found


def clone_findings(text: str, read: Read) -> list[str]:
    """A benchmark a page runs, whose data the clone fetches (``python benchmarks/wmt_data.py``), runs after the
    page has shown that command."""
    found, fetched = [], False
    for command in md.commands(text):
        for words in md.simple_commands(command.line):
            script = next((w for w in words if re.fullmatch(r"benchmarks/\w+\.(?:py|sh)", w)), None)
            if script == "benchmarks/wmt_data.py":
                fetched = True
            elif script and _needs_data(read(script) or "") and not fetched:
                found.append(f"{command.line[:60]}: needs the WMT file; show `python benchmarks/wmt_data.py` first")
    return found


def _needs_data(source: str) -> bool:
    """Whether a benchmark reads the fetched WMT file (and does not fetch it itself, as gpu_run.sh's pack does)."""
    if re.search(r"^\s*import (?:wmt_data|at_scale|common)\b", source, re.MULTILINE):
        return True
    return "data/human_judgments_toen.tsv" in source and not re.search(
        r"^[^#\n]*\bpython3? benchmarks/wmt_data\.py", source, re.MULTILINE
    )


def outside_reads(source: str) -> list[str]:
    """Paths a script builds that leave the repository: ``REPO.parent / ...`` or a literal ``../``."""
    hits = re.findall(
        r"(?:ROOT|REPO|HERE\.parent)\.parent\s*/\s*\"[\w.-]+\"|[\"']\.\./[\w./-]*[\"']|\.\./shared\S*", source
    )
    return [f"{h}: outside the clone" for h in hits]
