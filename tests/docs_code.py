"""What the code and the repository's files say, read once for tests/test_docs_claims.py: the options and flags that
exist, the pins, the extras, the repository's top-level names, the layout limits and the version. Each fact is read
from its source (the package, its parsers' own help, requirements*.txt, pyproject.toml, git), never restated."""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import io
import re
import subprocess
import sys

from paths import REPO

#: fastbertscore is not on the package index yet; an install line must install it from a clone. Set this to True
#: the day it is published.
ON_PYPI = False
#: Where an option or keyword a page names may live: the package and the code that runs it.
CODE = ("fastbertscore", "tests", "benchmarks", "app.py", "bertscore.py")


@functools.cache
def settings_names() -> frozenset[str]:
    import fastbertscore

    return frozenset(fastbertscore.Settings.names())


def keyword_names() -> frozenset[str]:
    """What a front door with an explicit signature takes (evaluate's ``_compute``): the settings and ``idf_sents``."""
    import fastbertscore

    return frozenset(p.name for p in fastbertscore.Settings.keyword_parameters())


@functools.cache
def known_keywords() -> frozenset[str]:
    """Every keyword the code knows: the parameters it defines, the fields of its records and the keywords it
    passes (to its own functions and to the libraries it drives)."""
    names: set[str] = set()
    files = [p for part in CODE for p in ([REPO / part] if part.endswith(".py") else (REPO / part).rglob("*.py"))]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.arg) or isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.Subscript | ast.Dict):  # kwargs["trust_remote_code"] = ..., {"num_proc": 2}
                keys = [node.slice] if isinstance(node, ast.Subscript) else node.keys
                names |= {k.value for k in keys if isinstance(k, ast.Constant) and str(k.value).isidentifier()}
    return frozenset(names)


def _help_of(main, argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main([*argv, "--help"])
    return out.getvalue()


@functools.cache
def cli_help(*argv: str) -> str:
    """``bertscore ARGV --help``, as the parser prints it."""
    from fastbertscore.cli.main import main

    return _help_of(main, list(argv))


@functools.cache
def module_help(module: str) -> str:
    """``python -m MODULE --help`` for a module of the package."""
    target = importlib.import_module("fastbertscore.__main__" if module == "fastbertscore" else module)
    return _help_of(target.main, [])


@functools.cache
def script_help(path: str) -> str | None:
    """``python PATH --help`` for a script of the repository; None where it has no argument parser."""
    if "ArgumentParser" not in (REPO / path).read_text(encoding="utf-8"):
        return None
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, path, "--help"], cwd=REPO, capture_output=True, text=True, timeout=300, env=env, check=False
    )
    return done.stdout


def help_flags(text: str) -> frozenset[str]:
    """The option strings of a parser's help: its usage and its option lines."""
    usage = text.split("\n\n", 1)[0]
    option_lines = "\n".join(line for line in text.splitlines() if re.match(r"^\s+-", line))
    return frozenset(re.findall(r"(?<![\w-])(--[A-Za-z][\w-]*|-[A-Za-z])(?![\w-])", usage + "\n" + option_lines))


def help_subcommands(text: str) -> frozenset[str]:
    """The subcommands a parser's usage offers (``{import,build,push} ...``; an option's choices have no ``...``)."""
    m = re.search(r"\{([\w,-]+)\} \.\.\.", text.split("\n\n", 1)[0])
    return frozenset(m[1].split(",")) if m else frozenset()


@functools.cache
def commands() -> frozenset[str]:
    from fastbertscore.cli.main import COMMANDS

    return frozenset(COMMANDS)


@functools.cache
def all_cli_flags() -> frozenset[str]:
    """Every flag of every command of the package: bertscore and its subcommands (and theirs), bertscore-show,
    bertscore-baseline, and the package's ``python -m`` entry points."""
    found: set[str] = set(help_flags(cli_help()))
    for command in commands():
        text = cli_help(command)
        found |= help_flags(text)
        for sub in help_subcommands(text):
            found |= help_flags(cli_help(command, sub))
    for module in ("fastbertscore", "fastbertscore.cli.torchrun", "fastbertscore.cli.raydata"):
        found |= help_flags(module_help(module))
    return frozenset(found)


def shell_script_arms(path: str) -> frozenset[str]:
    """The words a shell script's ``case "$1"`` takes (``pack | 1 | 2)``)."""
    arms = re.findall(r"^\s+([\w |-]+)\)\s*$", (REPO / path).read_text(encoding="utf-8"), re.MULTILINE)
    return frozenset(word.strip() for arm in arms for word in arm.split("|"))


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def pins() -> dict[str, str]:
    """``name==version`` of every requirements*.txt (names normalized as pip does)."""
    found = {}
    for path in sorted(REPO.glob("requirements*.txt")):
        for name, version in re.findall(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==(\S+)", path.read_text(), re.MULTILINE):
            found[normalized(name)] = version
    return found


@functools.cache
def extras() -> frozenset[str]:
    """The extras pyproject.toml declares (its ``[project.optional-dependencies]`` table)."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    table = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return frozenset(re.findall(r"^([\w-]+)\s*=", table, re.MULTILINE))


@functools.cache
def top_level() -> frozenset[str]:
    """The first part of every path git tracks here (files the repository holds, not what a run left behind)."""
    done = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=False)
    tracked = done.stdout.split() if done.returncode == 0 else [p.name for p in REPO.iterdir()]
    return frozenset(p.split("/", 1)[0] for p in tracked)


@functools.cache
def layout_limits() -> dict[str, int]:
    """The size limits tests/test_layout.py holds (``MAX_APP_LINES``, ``MAX_MODULE_LINES``)."""
    tree = ast.parse((REPO / "tests" / "test_layout.py").read_text(encoding="utf-8"))
    return {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
    }


def version() -> str:
    return re.search(r'"(.+)"', (REPO / "fastbertscore" / "_version.py").read_text())[1]


def libraries() -> frozenset[str]:
    """Names of the projects the requirements name (an issue of theirs is theirs to cite: ``torchmetrics issue
    #2728``), plus bert-score's import name."""
    return frozenset(pins()) | {"bert-score", "bert_score", "torchmetrics", "transformers", "evaluate", "gradio"}


def resolve_dotted(name: str) -> bool:
    """Whether ``fastbertscore.a.b`` (or ``fb.a.b``) names something: a module, or an attribute of one."""
    parts = name.split(".")
    parts[0] = "fastbertscore" if parts[0] == "fb" else parts[0]
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


#: Files a documented command builds in a clone (git-ignored): ``python benchmarks/wmt_data.py`` writes the WMT file.
BUILT = ("benchmarks/data/human_judgments_toen.tsv",)


def repo_path_exists(path: str) -> bool:
    """Whether a repository path exists, from the root or, as the pages name the package's modules, from the
    package's folder (``*`` and ``<placeholder>`` match any name), or is a file a documented command builds."""
    if path in BUILT:
        return True
    pattern = re.sub(r"<[^>]*>", "*", path).rstrip("/")
    roots = (REPO, REPO / "fastbertscore")
    return any(any(root.glob(pattern)) if "*" in pattern else (root / pattern).exists() for root in roots)
