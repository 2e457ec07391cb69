"""Every command that writes a file refuses, before any model work, an output that is one of its inputs (and an
output that is a folder). The commands are enumerated from ``cli/main.py``'s ``COMMANDS``, the console scripts of
``pyproject.toml`` (their subcommands read from ``--help``) and the ``python -m`` scale-out scripts, so a new
command fails here until it is listed as a writer, with its cases, or as one that writes nothing."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass

import pytest
import tomllib
from paths import RATINGS, REPO, SHIPPED_BASELINE

from fastbertscore.cli import baseline, raydata, show, torchrun
from fastbertscore.cli.main import COMMANDS
from fastbertscore.cli.main import main as bertscore

#: The scale-out scripts, run as ``python -m`` (torchrun's and Ray's), are commands too.
MODULE_SCRIPTS = {
    "torchrun -m fastbertscore.cli.torchrun": torchrun.main,
    "python -m fastbertscore.cli.raydata": raydata.main,
}
#: What each console script runs, by the name of its target.
SCRIPTS = {"fastbertscore.cli.main:main": bertscore, "fastbertscore.cli.show:main": show.main}
SCRIPTS["fastbertscore.cli.baseline:main"] = baseline.main

#: Commands that write no file: what they make goes to standard output (or, for push, to the Hub).
WRITE_NOTHING = {
    "bertscore": "scores on stdout",
    "bertscore compare": "the comparison on stdout",
    "bertscore env": "facts on stdout",
    "bertscore baseline push": "uploads to the Hub; nothing is written here",
    "bertscore-baseline push": "uploads to the Hub; nothing is written here",
}

#: A model that does not exist: a command that loaded one before refusing its output would say so instead.
NO_MODEL = "/no/such/model"


def _subcommands(run, argv: list[str], capsys) -> list[str]:
    """The subcommands ``--help`` lists (``{import,build,push} ...``), or none."""
    with pytest.raises(SystemExit):
        run([*argv, "--help"])
    usage = capsys.readouterr().out
    found = re.search(r"\{([\w,-]+)\} \.\.\.", usage)
    return found[1].split(",") if found else []


def _every_command(capsys) -> dict[str, tuple]:
    """Every command a user can run: name → (function, argv before its own flags)."""
    commands: dict[str, tuple] = {"bertscore": (bertscore, [])}
    commands.update({f"bertscore {name}": (bertscore, [name]) for name in COMMANDS})
    for script, target in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"].items():
        commands[script] = (SCRIPTS[target], [])
    commands.update({name: (run, []) for name, run in MODULE_SCRIPTS.items()})
    for name, (run, argv) in list(commands.items()):
        if name != "bertscore":  # the scorer's own --help lists no subcommands
            for sub in _subcommands(run, argv, capsys):
                commands.pop(name, None)
                commands[f"{name} {sub}"] = (run, [*argv, sub])
    return commands


@dataclass(frozen=True)
class Case:
    """``argv`` (after the command) where ``{same}`` is one file named as an input (``input_flag``) and an output;
    it is made as ``name`` holding ``kind``'s content. ``{texts}``, ``{data}``, ``{samples}``, ``{tmp}`` are other
    files. ``env`` is set with ``{same}`` filled in."""

    command: str
    argv: tuple[str, ...]
    input_flag: str
    name: str
    kind: str
    env: tuple[tuple[str, str], ...] = ()


REGISTRY = (("FASTBERTSCORE_LAYER_REGISTRY", "{same}"),)
BASELINE = ("--rescale_with_baseline", "--baseline_path", "{same}")
SHOW = ("-c", "a cat sat", "-r", "a dog ran", "-f", "{same}", "-m", NO_MODEL)
IMPORT = ("import", "--source", "{same}", "--out", "{same}")
BUILD = ("build", "--model", NO_MODEL, "--name", "acme/tiny", "--lang", "en", "--corpus", "{same}", "--out", "{tmp}/r")
CASES = [
    Case("bertscore pairwise", ("-a", "{same}", "-o", "{same}", "-m", NO_MODEL), "-a", "a.tsv", "texts"),
    Case(
        "bertscore pairwise", ("-a", "{texts}", "-r", "{same}", "-o", "{same}", "-m", NO_MODEL), "-r", "b.tsv", "texts"
    ),
    Case(
        "bertscore pairwise",
        ("-a", "{texts}", "-o", "{same}", "-m", NO_MODEL, *BASELINE),
        "--baseline_path",
        "b.tsv",
        "table",
    ),
    Case(
        "bertscore pairwise",
        ("-a", "{texts}", "-o", "{same}", "-m", NO_MODEL, "--layer_registry"),
        "--layer_registry's registry",
        "layers.tsv",
        "registry",
        REGISTRY,
    ),
    Case("bertscore mbr", ("{same}", "-o", "{same}", "-m", NO_MODEL), "samples", "s.jsonl", "groups"),
    Case(
        "bertscore mbr",
        ("{samples}", "--references", "{same}", "-o", "{same}", "-m", NO_MODEL),
        "--references",
        "r.jsonl",
        "groups",
    ),
    Case(
        "bertscore mbr", ("{samples}", "-o", "{same}", "-m", NO_MODEL, *BASELINE), "--baseline_path", "b.jsonl", "table"
    ),
    Case("bertscore correlate", ("--data", "{same}", "--out", "{same}", "-m", NO_MODEL), "--data", "d.csv", "ratings"),
    Case("bertscore correlate", ("--data", "{same}", "--plot", "{same}", "-m", NO_MODEL), "--data", "d.png", "ratings"),
    # the case: `--out b.md` writes b.csv beside it, which was the baseline it read
    Case(
        "bertscore correlate",
        ("--data", "{data}", "--out", "{tmp}/b.md", "-m", NO_MODEL, *BASELINE),
        "--baseline_path",
        "b.csv",
        "table",
    ),
    Case(
        "bertscore correlate",
        ("--data", "{data}", "--plot", "{same}", "-m", NO_MODEL, *BASELINE),
        "--baseline_path",
        "b.png",
        "table",
    ),
    Case(
        "bertscore correlate",
        ("--system-level", "--data", "{data}", "--out", "{same}", "-m", NO_MODEL, *BASELINE),
        "--baseline_path",
        "b.md",
        "table",
    ),
    Case("bertscore tune-layer", ("--data", "{same}", "--out", "{same}", "-m", NO_MODEL), "--data", "d.csv", "ratings"),
    Case(
        "bertscore tune-layer",
        ("--data", "{data}", "--out", "{same}", "-m", NO_MODEL, *BASELINE),
        "--baseline_path",
        "b.md",
        "table",
    ),
    Case(
        "bertscore tune-layer", ("--data", "{same}", "--record", "-m", NO_MODEL), "--data", "d.csv", "ratings", REGISTRY
    ),
    Case("bertscore show", (*SHOW, *BASELINE), "--baseline_path", "base.png", "table"),
    Case(
        "bertscore show", (*SHOW, "--layer_registry"), "--layer_registry's registry", "layers.png", "registry", REGISTRY
    ),
    Case("bertscore-show", (*SHOW, *BASELINE), "--baseline_path", "base.png", "table"),
    Case("bertscore baseline import", IMPORT[1:], "--source's en/t.tsv", "src", "tables"),
    Case("bertscore-baseline import", IMPORT[1:], "--source's en/t.tsv", "src", "tables"),
    Case("bertscore baseline build", BUILD[1:], "the corpus", "r/en/acme/tiny.tsv", "texts"),
    Case("bertscore-baseline build", BUILD[1:], "the corpus", "r/en/acme/tiny.tsv", "texts"),
    *[
        Case("torchrun -m fastbertscore.cli.torchrun", argv, flag, "x.tsv", kind)
        for argv, flag, kind in [
            (("-c", "{same}", "-r", "{texts}", "--out", "{same}"), "-c", "texts"),
            (("-c", "{texts}", "-r", "{same}", "--out", "{same}"), "-r", "texts"),
            (("-c", "{texts}", "-r", "{texts}", "--out", "{same}", *BASELINE), "--baseline_path", "table"),
        ]
    ],
    Case(
        "python -m fastbertscore.cli.raydata",
        ("{same}", "--out", "{same}", "-m", NO_MODEL),
        "pairs",
        "p.tsv",
        "pairs",
    ),
    Case(
        "python -m fastbertscore.cli.raydata",
        ("{pairs}", "--out", "{same}", "-m", NO_MODEL, *BASELINE),
        "--baseline_path",
        "b.tsv",
        "table",
    ),
]

TEXTS = ["the cat sat on the mat", "it is raining today", "birds sing at dawn"]


def _content(kind: str) -> str:
    with RATINGS.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))[:12]
    ratings = ",".join(rows[0]) + "\n" + "".join(",".join(f'"{v}"' for v in row.values()) + "\n" for row in rows)
    return {
        "texts": "\n".join(TEXTS) + "\n",
        "groups": json.dumps(TEXTS) + "\n",
        "table": SHIPPED_BASELINE.read_text(encoding="utf-8"),
        "registry": "{}\n",
        "ratings": ratings,
        "pairs": "candidate\treference\n" + "".join(f"{t}\t{t}\n" for t in TEXTS),
    }[kind]


def _files(tmp_path, case: Case) -> dict[str, str]:
    """The case's files: ``{same}`` and the others its argv names."""
    same = tmp_path / case.name
    if case.kind == "tables":  # a baseline folder: import --source
        (same / "en").mkdir(parents=True)
        (same / "en" / "t.tsv").write_text(_content("table"), encoding="utf-8")
    else:
        same.parent.mkdir(parents=True, exist_ok=True)
        same.write_text(_content(case.kind), encoding="utf-8")
    others = {"texts": "t.txt", "data": "data.csv", "samples": "samples.jsonl", "pairs": "pairs.tsv"}
    kinds = {"texts": "texts", "data": "ratings", "samples": "groups", "pairs": "pairs"}
    for key, name in others.items():
        (tmp_path / name).write_text(_content(kinds[key]), encoding="utf-8")
    return {"same": str(same), "tmp": str(tmp_path), **{key: str(tmp_path / name) for key, name in others.items()}}


def _snapshot(tmp_path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}


def test_every_command_is_listed_as_a_writer_or_as_writing_nothing(capsys):
    commands = set(_every_command(capsys))
    writers = {case.command for case in CASES}
    assert commands == writers | set(WRITE_NOTHING), "list the new command's outputs in CASES, or in WRITE_NOTHING"
    assert not writers & set(WRITE_NOTHING)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.command}: {c.input_flag}")
def test_no_command_writes_over_an_input_and_it_says_so_before_any_model_work(case, tmp_path, capsys, monkeypatch):
    files = _files(tmp_path, case)
    for variable, value in case.env:
        monkeypatch.setenv(variable, value.format(**files))
    run, prefix = _every_command(capsys)[case.command]
    before = _snapshot(tmp_path)
    rc = run([*prefix, *(arg.format(**files) for arg in case.argv)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    same = files["same"] if case.kind != "tables" else f"{files['same']}/en/t.tsv"
    assert f"would overwrite {case.input_flag} {same}" in err[0]
    assert _snapshot(tmp_path) == before  # nothing written, nothing changed


#: For each writer, its output named as a folder (named as the output's kind of file: only being a folder is wrong
#: with it): refused before any model work, not after it.
FOLDERS = {
    "bertscore pairwise": (("-a", "{texts}", "-o", "{folder}"), "m.tsv"),
    "bertscore mbr": (("{samples}", "-o", "{folder}"), "picks.jsonl"),
    "bertscore correlate": (("--data", "{data}", "--plot", "{folder}"), "tau.png"),
    "bertscore tune-layer": (("--data", "{data}", "--out", "{folder}"), "table.md"),
    "bertscore show": (("-c", "a cat sat", "-r", "a dog ran", "-f", "{folder}"), "out.png"),
    "bertscore-show": (("-c", "a cat sat", "-r", "a dog ran", "-f", "{folder}"), "out.png"),
    "torchrun -m fastbertscore.cli.torchrun": (("-c", "{texts}", "-r", "{texts}", "--out", "{folder}"), "s.tsv"),
    "python -m fastbertscore.cli.raydata": (("{pairs}", "--out", "{folder}"), "s.tsv"),
}


@pytest.mark.parametrize("command", list(FOLDERS))
def test_an_output_that_is_a_folder_is_refused_before_any_model_work(command, tmp_path, capsys):
    files = _files(tmp_path, Case(command, (), "", "unused.txt", "texts"))
    argv, name = FOLDERS[command]
    folder = tmp_path / name
    folder.mkdir()
    run, prefix = _every_command(capsys)[command]
    rc = run([*prefix, *(arg.format(folder=folder, **files) for arg in argv), "-m", NO_MODEL])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].endswith(f"{folder} is a folder: name a file to write"), err


def test_a_file_updated_on_purpose_is_not_refused_as_its_own_input(tmp_path, monkeypatch):
    """``tune-layer --record --layer_registry`` reads the registry and records into it (under its lock)."""
    import argparse

    from fastbertscore.cli.common import check_outputs

    registry = tmp_path / "layers.json"
    monkeypatch.setenv("FASTBERTSCORE_LAYER_REGISTRY", str(registry))
    args = argparse.Namespace(layer_registry=True, baseline_path=None)
    check_outputs(args, {"--out": tmp_path / "t.md"}, {"--data": tmp_path / "d.csv"}, updates={"--record": registry})
    with pytest.raises(ValueError, match=f"--record {registry} would overwrite --out {registry}"):
        check_outputs(args, {"--out": registry}, {}, updates={"--record": registry})
