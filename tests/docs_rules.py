"""The rules tests/test_docs_claims.py holds the pages to. Each is a function from a page's text (and the files it
talks about, passed in so that a test can feed another version of them) to findings, one sentence each."""

from __future__ import annotations

import re

import docs_code as code
import docs_text as md
from docs_python import python_findings

OFFLINE = re.compile(r"\boffline\b|\bno network\b|\bwithout (?:a |the )?network\b", re.IGNORECASE)
CLOCK = re.compile(r"(?<![\w.:/-])(?:[01]?\d|2[0-3]):[0-5]\d(?![\w:])")
INTERNAL = re.compile(r"\bthis VM\b|\bsessions?\b|\blent\b|\bagents?\b|\brun \d+(?=[,;)])", re.IGNORECASE)
ISSUE = re.compile(r"(?:([\w-]+)\s+)?\b(?:issues?|PR|pull request)\s+#?(\d+)|([\w-]+)?#(\d+)\b", re.IGNORECASE)
MACHINES = ("EPYC", "Xeon", "Intel", "AMD", "AMX", "AVX2", "AVX-512", "AVX512", "H100", "H200", "GPU", "Apple")


def _runs_pip(words: list[str]) -> bool:
    return (words[:2] == ["pip", "install"] or words[:4] == ["python", "-m", "pip", "install"]) and (
        "--no-index" not in words
    )


def _pip_args(words: list[str]) -> list[str] | None:
    for head in (["pip", "install"], ["pip3", "install"], ["python", "-m", "pip", "install"]):
        if words[: len(head)] == head:
            return words[len(head) :]
    return None


def cli_findings(text: str) -> list[str]:
    """Every subcommand and flag a command of the page uses exists in its parser; a flag named alone exists in one of
    the package's commands."""
    found = []
    for command in md.commands(text):
        for words in md.simple_commands(command.line):
            found += _command_findings(words)
    for span in md.spans(text):
        if re.match(r"^--?[A-Za-z]", span) and md.flags(span.replace("/", " ").split()):
            found += [
                f"{flag} is a flag of no command"
                for flag in md.flags(span.replace("/", " ").split())
                if flag not in code.all_cli_flags()
            ]
    return found


def _command_findings(words: list[str]) -> list[str]:
    program, args = words[0], words[1:]
    if program in ("bertscore", "bertscore-show", "bertscore-baseline"):
        argv = {"bertscore": [], "bertscore-show": ["show"], "bertscore-baseline": ["baseline"]}[program]
        if program == "bertscore" and args and not args[0].startswith("-"):
            if args[0] not in code.commands():
                return [f"bertscore {args[0]}: no such command (commands: {', '.join(sorted(code.commands()))})"]
            argv, args = [args[0]], args[1:]
        subs = code.help_subcommands(code.cli_help(*argv))
        if subs and args:  # the group named alone is a mention; with arguments, its first is a command of it
            if args[0] not in subs:
                return [f"{' '.join(words[:2])}: give one of its commands ({', '.join(sorted(subs))})"]
            argv, args = [*argv, args[0]], args[1:]
        known, shown = code.help_flags(code.cli_help(*argv)), " ".join(["bertscore", *argv])
    elif program in ("python", "python3", "torchrun") and "-m" in args:
        module = args[args.index("-m") + 1] if args.index("-m") + 1 < len(args) else ""
        if module.split(".")[0] != "fastbertscore":
            return []
        if not code.resolve_dotted(module):
            return [f"python -m {module}: no such module"]
        args, known, shown = args[args.index("-m") + 2 :], code.help_flags(code.module_help(module)), module
    elif program in ("python", "python3") and args and args[0].endswith(".py") and code.repo_path_exists(args[0]):
        help_text = code.script_help(args[0])
        args, known, shown = args[1:], code.help_flags(help_text or ""), args[0]
    elif program == "bash" and args and args[0].endswith(".sh") and code.repo_path_exists(args[0]):
        arms = code.shell_script_arms(args[0])
        return (
            [f"bash {args[0]} {args[1]}: it takes {' | '.join(sorted(arms))}"]
            if args[1:2] and args[1] not in arms
            else []
        )
    else:
        return []
    return [f"{shown} has no flag {flag}" for flag in md.flags(args) if flag not in known]


def option_findings(text: str) -> list[str]:
    """Python keywords the page passes to our callables exist (docs_python), and every ``name=`` it shows is a
    keyword the code knows; a Settings option named in a command exists as a flag (cli_findings)."""
    found = python_findings(text)
    for span in md.spans(text):
        m = re.match(r"^([a-z][a-z0-9_]*)=(?!=)", span)
        if m and m[1] not in code.known_keywords():
            found.append(f"`{span}`: no option or keyword {m[1]!r} exists in the code")
    return found


def path_findings(text: str, page_dir: str = "") -> list[str]:
    """Every repository path the page names exists, and no example reaches outside the clone (``../``)."""
    found = []
    named = [w for s in md.spans(text) for w in re.sub(r"<[^>]*>", "*", s).split()]
    run = [w for c in md.commands(text) for cmd in md.simple_commands(c.line) for w in cmd]
    for word in named + run:
        path = word.strip("'\"(),;:").split("#")[0]
        data = re.search(r"\.(?:tsv|csv|jsonl?|txt|md|py|sh|npy)$", path)
        if path.startswith("../") and (word in run or data):
            found.append(f"{path}: outside the clone (a clone has only what the repository holds)")
        if "@" in path or ":" in path:
            continue  # a Hub repo at a revision (org/name@rev:file), not a path
        path = path.removeprefix("./")
        first = path.split("/", 1)[0]
        if first in code.top_level() and ("/" in path or path == first) and not code.repo_path_exists(path):
            found.append(f"{path}: no such path in the repository")
    for target in md.links(text):
        if re.match(r"^(\w+:|#)", target):
            continue
        path = target.split("#")[0]
        resolved = (code.REPO / page_dir / path).resolve()
        if not resolved.is_relative_to(code.REPO) or not resolved.exists():
            found.append(f"link {target}: no such file in the repository")
    return found


def pin_findings(text: str) -> list[str]:
    """Every ``name==version`` the page names, and the Space's ``sdk_version``, equal the pin of requirements*.txt."""
    found = []
    for name, version in re.findall(r"([A-Za-z][\w.-]*)(?:\[[^\]]*\])?==([0-9][\w.]*)", text):
        pin = code.pins().get(code.normalized(name))
        if pin is not None and version != pin:
            found.append(f"{name}=={version}: requirements pin {name}=={pin}")
    meta = md.front_matter(text)
    if "sdk_version" in meta and code.pins().get(meta.get("sdk", "")) not in (None, meta["sdk_version"]):
        found.append(f"sdk_version {meta['sdk_version']}: requirements pin {meta['sdk']}=={code.pins()[meta['sdk']]}")
    return found


def install_findings(text: str, requirements: str) -> list[str]:
    """Install lines work from a clone: fastbertscore from the package index only once it is published there, extras
    that pyproject.toml declares; a claim that requirements.txt gives torch's CPU build holds only if its torch line
    names one; no command that runs pip is said to work offline."""
    found = []
    for command in md.commands(text):
        for words in md.simple_commands(command.line):
            args = _pip_args(words)
            for arg in args or []:
                if arg.startswith("-"):
                    continue
                extras = set(re.findall(r"\[([^\]]*)\]", arg)[0].split(",")) if "[" in arg else set()
                if arg.startswith((".", "/")) and extras - code.extras():
                    found.append(f"{arg}: no such extra (pyproject.toml declares {', '.join(sorted(code.extras()))})")
                if code.normalized(re.split(r"[\[=<>]", arg)[0]) == "fastbertscore" and not code.ON_PYPI:
                    found.append(
                        f"pip install {arg}: fastbertscore is not on the package index; from a clone: "
                        f"pip install -e '.{arg[len('fastbertscore') :]}'"
                    )
            if args is not None and OFFLINE.search(command.comment + " " + command.above):
                found.append(f"{command.line}: said to need no network, but pip installs from the package index")
    segments = md.segments(text)
    for i, (kind, _, block) in enumerate(segments):
        earlier = [c for k, lang, c in segments[:i] if k == "code" and lang in md.SHELLS]
        pip = earlier and any(_runs_pip(w) for c in md.block_commands(earlier[-1]) for w in md.simple_commands(c.line))
        for sentence in md.sentences(block) if kind == "prose" else []:
            if pip and OFFLINE.search(sentence) and re.search(r"\bcommands?\b", sentence):
                found.append(f"{sentence!r}: the commands above run pip, which needs the package index")
    lines = "\n".join(line.split("#", 1)[0] for line in requirements.splitlines())  # what pip reads, not comments
    cpu = re.search(r"^torch\S*\+cpu|--(?:extra-)?index-url\s+\S*/cpu", lines, re.MULTILINE)
    for sentence in md.sentences(text):
        if re.search(r"requirements\.txt`?\s+pins\b[^;,]*?\bCPU (?:build|wheel)", sentence) and not cpu:
            found.append(f"{sentence!r}: requirements.txt pins torch from PyPI, which is the CUDA build on Linux")
    return found


def ci_findings(text: str, ci_run: str, readme: str) -> list[str]:
    """A command said to be exactly what .ci/run runs (first) is a line of .ci/run (the first that runs a tool)."""
    tools = ("python", "python3", "pytest", "ruff", "mypy", "pip", "pre-commit")
    lines = [re.sub(r"^(\w+=\S+\s+)+", "", line.strip()) for line in ci_run.splitlines()]
    runs = [line for line in lines if line.split(" ", 1)[0] in tools]
    readme_test = [c.line for c in md.commands(readme) if "run the tests" in (c.comment + " " + c.above)]
    claims = [(c.comment + " " + c.above, [c.line]) for c in md.commands(text)]
    claims += [(s, readme_test) for s in md.sentences(text) if "README's test command" in s]
    found = []
    for claim, shown in claims:
        if ".ci/run" in claim and re.search(r"\bexactly\b", claim):
            for line in shown:
                if line not in runs:
                    found.append(f"{line}: said to be what .ci/run runs, but .ci/run has no such line")
                elif re.search(r"\bfirst\b", claim) and runs[0] != line:
                    found.append(f"{line}: said to be what .ci/run runs first, but it first runs {runs[0]}")
    return found


def size_findings(text: str) -> list[str]:
    """A line bound stated for app.py or for the package's modules is the one tests/test_layout.py holds."""
    limits, found = code.layout_limits(), []
    app_lines = len((code.REPO / "app.py").read_text(encoding="utf-8").splitlines())
    for sentence in md.sentences(text):
        for n in re.findall(r"`?app\.py`?[^.;]*?\bat most (\d+)", sentence):
            if int(n) != limits["MAX_APP_LINES"]:
                found.append(f"app.py 'at most {n}' lines: tests/test_layout.py holds it to {limits['MAX_APP_LINES']}")
        for n in re.findall(r"(\d+)-line `?app\.py", sentence):
            if int(n) != app_lines:
                found.append(f"a {n}-line app.py: it has {app_lines} lines")
        for n in re.findall(r"\bmodules?\b[^.;]*?\b(?:over|more than|at most) (\d+) lines", sentence):
            if int(n) != limits["MAX_MODULE_LINES"]:
                found.append(f"modules of {n} lines: tests/test_layout.py holds them to {limits['MAX_MODULE_LINES']}")
    return found
