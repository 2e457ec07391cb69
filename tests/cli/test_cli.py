"""bertscore / bertscore-show: numbers equal the engine's; bad input exits 2 with one line."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys

import pytest
import torch
from paths import (
    MINILM,
    SHIPPED_BASELINE,
)
from tolerances import PRINTED_6, REDUCED_PAIR, assert_close, assert_scores_close, prf_bounds

import fastbertscore as fb
from fastbertscore.baselines.table import read_baseline
from fastbertscore.cli.main import main
from fastbertscore.cli.show import main as show_main


@pytest.fixture()
def files(tmp_path, mt_pairs):
    cands, refs = mt_pairs[0][:8], mt_pairs[1][:8]
    paths = {}
    for name, lines in (("cand", cands), ("ref", refs), ("ref2", [c.upper() for c in cands])):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths, cands, refs


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def test_files_single_reference_seg_level(files, capsys):
    paths, cands, refs = files
    assert (
        main(["-c", str(paths["cand"]), "-r", str(paths["ref"]), "-m", MINILM, "-l", "4", "-s", "--output", "json"])
        == 0
    )
    out = _json(capsys)
    (P, R, F), hashcode = fb.score(cands, refs, model_type=MINILM, num_layers=4, return_hash=True)
    assert out["hash"] == hashcode
    assert_close(out["F1"], F.mean(), prf_bounds()[2], "mean F1")
    assert_scores_close([[p[k] for p in out["pairs"]] for k in ("P", "R", "F1")], (P, R, F))


def test_files_multi_reference_and_idf_text_output(files, capsys):
    paths, cands, refs = files
    code = main(
        ["-c", str(paths["cand"]), "-r", str(paths["ref"]), str(paths["ref2"]), "-m", MINILM, "-l", "3", "--idf", "-s"]
    )
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    (P, R, F), hashcode = fb.score(
        cands,
        [[r, c.upper()] for r, c in zip(refs, cands, strict=True)],
        model_type=MINILM,
        num_layers=3,
        idf=True,
        return_hash=True,
    )
    assert lines[0].startswith(f"{hashcode} P: ")
    printed = torch.tensor(_numbers("\n".join(lines)))  # the mean line, then one line per pair, 6 decimals each
    expected = torch.stack([torch.stack([P.mean(), R.mean(), F.mean()]), *torch.stack([P, R, F], dim=-1)])
    for k, bound in enumerate(prf_bounds()):
        assert_close(printed[:, k], expected[:, k], bound + PRINTED_6, "PRF"[k])


def test_strings_several_references(capsys):
    assert (
        main(["-c", "The cat sat.", "-r", "A cat sat.", "The dog ran.", "-m", MINILM, "-l", "4", "--output", "json"])
        == 0
    )
    F = fb.score(["The cat sat."], [["A cat sat.", "The dog ran."]], model_type=MINILM, num_layers=4)[2]
    assert_close(_json(capsys)["F1"], F[0], prf_bounds()[2], "F1")


def test_an_empty_line_is_named_by_its_file_and_line(files, tmp_path, caplog):
    paths, _cands, refs = files
    blank = tmp_path / "blank.txt"
    blank.write_text("\n".join(refs[:2] + [" "] + refs[3:]) + "\n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="fastbertscore"):
        assert main(["-c", str(paths["cand"]), "-r", str(paths["ref"]), str(blank), "-m", MINILM, "-l", "3"]) == 0
    said = " ".join(r.getMessage() for r in caplog.records)
    assert f"1 reference(s) empty (first: {blank} line 3)" in said  # the file and line, not refs[2][1]


def test_compare_names_an_empty_line_by_its_file_and_line_as_bertscore_does(files, tmp_path, caplog):
    paths, cands, refs = files
    system, blank = tmp_path / "sys.txt", tmp_path / "blank.txt"
    system.write_text("\n".join(cands[:1] + [""] + cands[2:]) + "\n", encoding="utf-8")
    blank.write_text("\n".join(refs[:2] + [" "] + refs[3:]) + "\n", encoding="utf-8")
    argv = ["compare", str(paths["cand"]), str(system), "-r", str(paths["ref"]), "-r", str(blank)]
    with caplog.at_level("WARNING", logger="fastbertscore"):
        assert main([*argv, "-m", MINILM, "-l", "3", "--n-samples", "10"]) == 0
    said = " ".join(r.getMessage() for r in caplog.records)
    assert f"1 candidate(s) empty (first: {system} line 2)" in said  # not systems['sys.txt'][1], 0-based
    assert f"1 reference(s) empty (first: {blank} line 3)" in said  # not references[2][1]


@pytest.mark.slow  # the default model's load: .ci/run's second path keeps to the fast numeric tests
def test_stdin_and_default_model(files, monkeypatch, capsys):
    # In this process, stdin a byte stream as a pipe gives (the command reads its bytes as UTF-8); a real process
    # reading a real pipe is tests/cli/test_messages.py's test_standard_input_is_cut_as_a_file_is.
    paths, cands, refs = files
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(paths["cand"].read_bytes()), encoding="utf-8"))
    assert main(["-c", "-", "-r", str(paths["ref"]), "--output", "tsv", "-s"]) == 0
    out, err = capsys.readouterr()
    assert f"using the embedded default model {MINILM}" in err
    F = fb.score(cands, refs, model_type=MINILM)[2]
    rows = [line.split("\t") for line in out.splitlines()[2:]]
    assert_close([float(r[2]) for r in rows], F, prf_bounds()[2] + PRINTED_6, "F1 printed as TSV")


@pytest.mark.parametrize(
    "args, message",
    [
        (["-c", "{cand}", "-r", "missing.txt"], "file not found: missing.txt"),
        (["-c", "{cand}", "-r", "{short}"], "has 2 lines but the candidates have 8"),
        (
            ["-c", "{cand}", "-r", "{ref}", "-m", "/nonexistent/model"],
            "could not load the tokenizer of --model /nonexistent/model: it names a local folder",
        ),
        (["-c", "a b", "-r", "{ref}", "-m", MINILM], "--cand is a string but --ref names a file"),
        (["-c", "{cand}", "-r", "{ref}", "--lang", "english"], "--lang english is not a known language code"),
    ],
)
def test_bad_input_exits_2_with_one_line(files, tmp_path, capsys, args, message):
    paths, _, _ = files
    short = tmp_path / "short.txt"
    short.write_text("one\ntwo\n")
    argv = [a.format(cand=paths["cand"], ref=paths["ref"], short=short) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bertscore: error: ") and message in err[0]


def test_show_writes_a_heatmap_and_lists_missing_words(tmp_path, capsys):
    from PIL import Image

    out = tmp_path / "heat.png"
    code = show_main(
        [
            "-c",
            "The president met the minister in Paris.",
            "-r",
            "The president met the prime minister in Paris and signed a trade deal.",
            "-o",
            str(out),
            "-m",
            MINILM,
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "missing: " in printed and "trade" in printed.split("missing: ")[1].splitlines()[0]
    with Image.open(out) as image:
        assert image.format == "PNG" and image.width > 300 and image.height > 200
    assert show_main(["-c", "a", "-r", "b", "-o", str(tmp_path / "x.jpg"), "-m", MINILM]) == 2


def test_cache_dir_and_dtype_flags(files, capsys, tmp_path):
    paths, cands, refs = files
    argv = ["-c", str(paths["cand"]), "-r", str(paths["ref"]), "-m", MINILM, "-l", "4", "--output", "json"]
    assert main([*argv, "--cache_dir", str(tmp_path / "emb")]) == 0
    first = _json(capsys)
    assert len(list((tmp_path / "emb").rglob("*.emb"))) == len(set(cands) | set(refs))
    assert main([*argv, "--cache_dir", str(tmp_path / "emb")]) == 0  # a second run, from the files, agrees
    assert _json(capsys) == first
    assert main([*argv, "--dtype", "bfloat16"]) == 0
    fast = _json(capsys)
    assert fast["hash"] == first["hash"] + "_dtype=bfloat16"
    assert_close(fast["F1"], first["F1"], REDUCED_PAIR, "mean F1 in bfloat16")  # a mean is within its worst pair


def test_env_prints_what_a_bug_report_needs(capsys):
    import tokenizers
    import transformers

    from fastbertscore import hardware

    assert main(["env"]) == 0
    lines = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert lines["fastbertscore"] == fb.__version__ and lines["torch"] == torch.__version__
    assert lines["transformers"] == transformers.__version__ and lines["tokenizers"] == tokenizers.__version__
    assert lines["cpu capability"] == torch.backends.cpu.get_cpu_capability()
    assert lines["cpu native bf16"] == str(hardware.cpu_native_bf16())
    assert lines["cuda available"] == str(torch.cuda.is_available())
    assert lines["dtype='auto' on cpu"] == hardware.auto_dtype("cpu")
    assert ("measured" in lines["cpu bf16 speed-up"]) is hardware.cpu_native_bf16()


def _run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _numbers(stdout: str) -> list[list[float]]:
    """The mean line's P, R, F1 and each seg-level line, as numbers (the hash names differ: ours vs bert-score)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    head = lines[0].split(" P: ")[1].replace(" R:", "").replace(" F1:", "").split()
    return [[float(x) for x in head]] + [[float(x) for x in line.split("\t")] for line in lines[1:]]


@pytest.mark.slow
def test_bertscore_takes_bert_score_flags_with_the_same_meaning(files, minilm_path, capsys):
    paths, _, _ = files
    args = [
        "-c",
        str(paths["cand"]),
        "-r",
        str(paths["ref"]),
        str(paths["ref2"]),
        "-m",
        minilm_path,
        "-l",
        "4",
        "-b",
        "3",
        "--nthreads",
        "2",
        "--idf",
        "-s",
        "--lang",
        "en",
        "--rescale_with_baseline",
        "--baseline_path",
        str(SHIPPED_BASELINE),
    ]
    theirs = _numbers(_run([shutil.which("bert-score"), *args]))
    # Ours in this process (the installed `bertscore` program runs as a process in docs/cli.md's examples).
    capsys.readouterr()
    assert main(args) == 0
    ours = _numbers(capsys.readouterr().out)
    assert len(ours) == len(theirs) == 9  # the mean and 8 pairs
    # Both print 6 decimals of rescaled values: each side's rounding, plus the rescaled fp32 bound per column.
    baseline = read_baseline(SHIPPED_BASELINE)[4]
    for k, bound in enumerate(prf_bounds(baseline=baseline)):
        assert_close(torch.tensor(ours)[:, k], torch.tensor(theirs)[:, k], bound.item() + 2 * PRINTED_6, "PRF"[k])


@pytest.mark.slow
def test_bertscore_show_takes_bert_score_show_flags(minilm_path, tmp_path, capsys):
    args = [
        "-c",
        "The cat sat on the mat.",
        "-r",
        "A cat was sitting on the mat.",
        "-m",
        minilm_path,
        "-l",
        "4",
        "--lang",
        "en",
        "--rescale_with_baseline",
        "--baseline_path",
        str(SHIPPED_BASELINE),
    ]
    _run([shutil.which("bert-score-show"), *args, "-f", str(tmp_path / "theirs.png")])
    capsys.readouterr()
    assert show_main([*args, "-f", str(tmp_path / "ours.png")]) == 0  # in this process, as bertscore's flags above
    out = capsys.readouterr().out
    for name in ("theirs.png", "ours.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"heatmap: {tmp_path / 'ours.png'}" in out


def test_one_entry_reaches_every_command(capsys, tmp_path):
    from paths import REPO

    from fastbertscore.cli.main import COMMANDS

    assert set(COMMANDS) == {"pairwise", "mbr", "compare", "correlate", "tune-layer", "env", "show", "baseline"}
    assert main(["baseline", "push", "--repo", "acme/baselines", "--root", str(REPO / "baselines"), "--dry-run"]) == 0
    assert "files would be compared with datasets/acme/baselines" in capsys.readouterr().out
    assert main(["show", "-c", "a cat", "-r", "a dog", "-m", MINILM, "-l", "3", "-f", str(tmp_path / "h.png")]) == 0
    assert (tmp_path / "h.png").stat().st_size > 1000
    for command in COMMANDS:  # each answers --help with its own usage, not the scoring command's
        with pytest.raises(SystemExit) as done:
            main([command, "--help"])
        assert done.value.code == 0
        usage = capsys.readouterr().out
        assert "-c CAND -r REF" not in usage or command == "show", command


def test_show_sentence_level_rescaled_lists_what_score_finds_missing(tmp_path, capsys):
    from fastbertscore.explanations.explanation import split_sentences

    cand = "The president met the prime minister in Paris. It was warm and bright outside."
    ref = "The weather was sunny. The president met the prime minister in Paris. Stock prices fell sharply on Wall Street."
    threshold = 0.4  # a sentence between this and its twice-rescaled value tells one rescaling from two
    argv = [
        "-c",
        cand,
        "-r",
        ref,
        "-o",
        str(tmp_path / "h.png"),
        "-m",
        MINILM,
        "--lang",
        "en",
        "--rescale_with_baseline",
        "--level",
        "sentence",
        "--threshold",
        str(threshold),
    ]
    assert show_main(argv) == 0
    printed = capsys.readouterr().out.split("missing: ")[1].splitlines()[0]
    r_sents = [ref[a:b] for a, b in split_sentences(ref)]
    recall = fb.score([cand] * len(r_sents), r_sents, model_type=MINILM, lang="en", rescale_with_baseline=True)[1]
    expected = [s for s, r in zip(r_sents, recall.tolist(), strict=True) if r < threshold]
    assert printed == (" | ".join(expected) or "(none)")
