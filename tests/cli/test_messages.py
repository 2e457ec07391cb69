"""What the command line says: errors in one line on stderr in the user's own words (flags, not
Python keywords), exit 2 for bad input."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
from tolerances import assert_close, prf_bounds

import fastbertscore as fb


def _cli(args: list[str], *, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fastbertscore.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


@pytest.fixture()
def refused_endpoint():
    """A Hub endpoint on 127.0.0.1 that refuses every connection: a port bound (so nothing else takes it) and
    never listened on. The same answer as no network, at once and every time."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize(
    "args, model",
    [
        (["-m", "acme/no-such-model"], "acme/no-such-model"),
        (["--lang", "en", "--rescale_with_baseline"], "roberta-large"),  # the default model for en, not cached here
    ],
)
def test_a_model_the_hub_cannot_be_asked_for_fails_in_one_line(tmp_path, refused_endpoint, args, model):
    # Not offline: huggingface_hub retried each of two files five times with backoff (49 s, 46 lines on stderr).
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_ENDPOINT=refused_endpoint, HF_HOME=str(tmp_path / "hf"), HF_HUB_CACHE=str(tmp_path / "hf" / "hub"))
    (tmp_path / "c.txt").write_text("a cat\n", encoding="utf-8")
    done = _cli(["-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "c.txt"), *args], env=env)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(err) == 1, done.stderr  # no retry lines: the Hub is asked once
    assert err[0].startswith(f"bertscore: error: could not load the tokenizer of --model {model}: ")
    assert f"the Hub cannot be reached ({refused_endpoint}: " in err[0]


def test_a_baseline_the_hub_cannot_be_asked_for_fails_in_one_line(tmp_path, refused_endpoint):
    # The model is local; its baseline for de is neither shipped nor cached, and the Hub is out of reach: one
    # request, then one line (the download retried for 30 s with a dozen log lines).
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_ENDPOINT=refused_endpoint, HF_HOME=str(tmp_path / "hf"), HF_HUB_CACHE=str(tmp_path / "hf" / "hub"))
    (tmp_path / "c.txt").write_text("a cat\n", encoding="utf-8")
    done = _cli(
        [
            "-c",
            str(tmp_path / "c.txt"),
            "-r",
            str(tmp_path / "c.txt"),
            "-m",
            fb.DEFAULT_MODEL,
            "-l",
            "3",
            "--lang",
            "de",
            "--rescale_with_baseline",
        ],
        env=env,
    )
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1, done.stderr
    assert "no rescaling baseline" in err[0] and f"(cannot be reached: {refused_endpoint}: " in err[0]


@pytest.fixture()
def hub_without_the_model():
    """A Hub endpoint on 127.0.0.1 that answers every request as the Hub does for a repo that does not exist."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class NotFound(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_HEAD(self):
            body = b'{"error":"Repository not found"}'
            self.send_response(404)
            for key, value in (
                ("X-Error-Code", "RepoNotFound"),
                ("X-Error-Message", "Repository not found"),
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(body))),
            ):
                self.send_header(key, value)
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(body)

        do_GET = do_HEAD

    server = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_model_the_hub_does_not_have_fails_in_one_line(tmp_path, hub_without_the_model):
    # transformers' message runs over two lines; the Space and the CLI show one.
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(
        HF_ENDPOINT=hub_without_the_model, HF_HOME=str(tmp_path / "hf"), HF_HUB_CACHE=str(tmp_path / "hf" / "hub")
    )
    done = _cli(["-c", "a cat", "-r", "a dog", "-m", "acme/no-such-model"], env=env)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1, done.stderr
    assert err[0].startswith(
        "bertscore: error: could not load the tokenizer of --model acme/no-such-model from the "
        "Hub: acme/no-such-model is not a local folder and is not a valid model identifier"
    )


# Each file has 3 lines; U+2028, U+0085, \v, \f and a lone \r inside a line do not end it.
CANDS = "The cat\u2028sat.\nIt is\x85raining.\r\nA\vdog\fran\rhome.\n"
REFS = "A cat sat.\nRain\u2028falls.\nThe dog ran home.\n"


def test_files_are_cut_at_newline_only(tmp_path, capsys):
    from fastbertscore.cli.main import main

    (tmp_path / "c.txt").write_bytes(CANDS.encode("utf-8"))
    (tmp_path / "r.txt").write_bytes(REFS.encode("utf-8"))
    argv = [
        "-c",
        str(tmp_path / "c.txt"),
        "-r",
        str(tmp_path / "r.txt"),
        "-m",
        fb.DEFAULT_MODEL,
        "-l",
        "2",
        "-s",
        "--output",
        "json",
    ]
    assert main(argv) == 0  # was: 5 candidate lines against 4 references, or 4 misaligned pairs
    assert len(json.loads(capsys.readouterr().out)["pairs"]) == 3


@pytest.mark.slow
def test_standard_input_is_cut_as_a_file_is(tmp_path):
    (tmp_path / "r.txt").write_bytes(REFS.encode("utf-8"))
    done = _cli(
        ["-c", "-", "-r", str(tmp_path / "r.txt"), "-m", fb.DEFAULT_MODEL, "-l", "2", "-s", "--output", "tsv"],
        stdin=CANDS,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2 + 3  # the hash and header lines, then one line per pair


@pytest.mark.parametrize("args", [["-c", "-", "-r", "-"], ["-c", "a.txt", "-r", "-", "-"]])
def test_standard_input_is_read_once(args, capsys):
    from fastbertscore.cli.main import main

    # Was: every line scored against itself, 1.000000 everywhere, exit 0.
    assert main([*args, "-m", fb.DEFAULT_MODEL]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bertscore: error: '-' (standard input) can be given only once"), err


def test_the_torchrun_reader_cuts_at_newline_only(tmp_path, tiny_model, monkeypatch):
    from fastbertscore.cli.torchrun import main

    (tmp_path / "c.txt").write_bytes(CANDS.encode("utf-8"))
    (tmp_path / "r.txt").write_bytes(REFS.encode("utf-8"))
    # The rank torchrun would start, in this process: a world of one whose store takes a port the system picks (0).
    # (tests/scale/test_distributed.py launches torchrun itself.)
    for name, value in {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "0", "RANK": "0", "WORLD_SIZE": "1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LOCAL_RANK", "0")
    argv = ["-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "r.txt"), "--out", str(tmp_path / "scores.tsv")]
    assert main([*argv, "-m", tiny_model("bert"), "-l", "1"]) == 0
    assert len((tmp_path / "scores.tsv").read_text(encoding="utf-8").splitlines()) == 1 + 3  # header and 3 pairs


@pytest.mark.parametrize(
    "word, hint",
    [
        ("comapre", "did you mean 'bertscore compare'?"),
        ("tune_layer", "did you mean 'bertscore tune-layer'?"),
        ("frobnicate", "commands: pairwise, mbr, compare, correlate, tune-layer, env, show, baseline"),
    ],
)
def test_a_mistyped_command_is_named_with_the_nearest_one(word, hint, capsys):
    from fastbertscore.cli.main import main

    # Was: the scoring command's "the following arguments are required: -c/--cand".
    assert main([word, "-r", "refs.txt", "A.txt", "B.txt"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"bertscore: error: unknown command '{word}': {hint}"), err


HELPS = [[c] for c in ("pairwise", "mbr", "compare", "correlate", "tune-layer", "env", "show", "baseline")] + [
    [],
    ["baseline", "build"],
    ["baseline", "import"],
    ["baseline", "push"],
]


@pytest.mark.parametrize("command", HELPS, ids=lambda c: " ".join(c) or "score")
def test_help_is_plain_text(command, capsys):
    from fastbertscore.cli.main import main

    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: ")
    for markup in ("%%", "``", ":class:", ":func:", ":mod:"):  # argparse's escape, reST from docstrings
        assert markup not in text, (command, markup)


def test_pairwise_b_is_the_batch_size_and_r_the_reference_file(tmp_path, capsys):
    from fastbertscore.cli.main import main

    (tmp_path / "a.txt").write_text("The cat sat.\nIt rains.\nA dog ran.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("A cat sat.\nRain falls.\n", encoding="utf-8")
    for ref_flag in ("-r", "--ref"):
        out = tmp_path / f"m{ref_flag}.tsv"
        argv = ["pairwise", "-a", str(tmp_path / "a.txt"), ref_flag, str(tmp_path / "b.txt"), "-b", "2", "-o", str(out)]
        assert main([*argv, "-m", fb.DEFAULT_MODEL, "-l", "2"]) == 0
        assert [len(row.split("\t")) for row in out.read_text(encoding="utf-8").splitlines()] == [2, 2, 2]
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:  # the old meaning of -b: told, in one line
        main(["pairwise", "-a", str(tmp_path / "a.txt"), "-b", str(tmp_path / "b.txt"), "-o", str(tmp_path / "m.tsv")])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(
        "-b is the batch size, as in every command; give the reference texts with -r/--ref"
    ), err


def test_a_sentence_longer_than_a_file_name_is_scored_as_text(capsys):
    from fastbertscore.cli.main import main

    # Was: "error: OSError: [Errno 36] File name too long", exit 1: the text was tried as a path first.
    sentence = " ".join(["word"] * 100)
    assert main(["-c", sentence, "-r", sentence, "-m", fb.DEFAULT_MODEL, "-l", "2", "--output", "json"]) == 0
    F = fb.score([sentence], [sentence], model_type=fb.DEFAULT_MODEL, num_layers=2)[2]
    assert_close(json.loads(capsys.readouterr().out)["F1"], F[0], prf_bounds()[2], "F1")


LONG = " ".join(["word"] * 600)  # more tokens than the embedded model's 512


@pytest.mark.parametrize(
    "args, said",
    [
        (
            ["--rescale_with_baseline"],
            "--rescale_with_baseline needs --lang (baselines are per language) or --baseline_path",
        ),
        (
            ["-c", LONG, "-r", "a word", "--long_inputs", "error"],
            "pass --long_inputs window to score it in full or --long_inputs truncate to cut it as bert-score does",
        ),
    ],
)
def test_errors_name_flags_not_python_keywords(args, said, capsys):
    from fastbertscore.cli.main import main

    # Was: "rescale_with_baseline=True needs lang= ... or baseline_path=", "pass long_inputs='window' ...".
    argv = [*args, "-m", fb.DEFAULT_MODEL] + (["-c", "a", "-r", "b"] if "-c" not in args else [])
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bertscore: error: ") and err[0].endswith(said), err


@pytest.mark.slow
def test_log_lines_name_flags_not_python_keywords():
    done = _cli(["-c", LONG, "-r", "a word", "-m", fb.DEFAULT_MODEL, "-l", "2"])
    assert done.returncode == 0, done.stderr
    assert (
        "as bert-score does (the tokenizer's limit); their scores ignore the rest of the text. Pass --long_inputs "
        "window to score them in full." in done.stderr
    )  # was: Pass long_inputs='window'


@pytest.mark.parametrize(
    "args, said",
    [
        (["-f", "show.jpg2"], "-f show.jpg2: the image file must end in .png, .svg or .pdf"),  # was: "--out must end"
        (["--file", "show.jpg"], "--file show.jpg: the image file must end in .png, .svg or .pdf"),
        (["-c", "", "-r", "a cat"], "-c/--cand is empty: give a text to draw the heatmap of"),
        (["-c", "a cat", "-r", " "], "-r/--ref is empty: give a text to draw the heatmap of"),
    ],
)
def test_show_names_what_the_user_typed(args, said, capsys, tmp_path):
    from fastbertscore.cli.main import main

    # An empty text was drawn: matplotlib's UserWarning (with a file path) and the empty-text warning twice.
    texts = [] if "-c" in args else ["-c", "a cat", "-r", "a dog"]
    out = [] if any(flag in args for flag in ("-f", "--file")) else ["-f", str(tmp_path / "h.png")]
    assert main(["show", *texts, *args, *out, "-m", fb.DEFAULT_MODEL]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"bertscore-show: error: {said}"]
    assert not (tmp_path / "h.png").exists()


def test_pairwise_names_the_out_flag_the_user_typed(tmp_path, capsys):
    from fastbertscore.cli.main import main

    (tmp_path / "a.txt").write_text("a cat\n", encoding="utf-8")
    assert main(["pairwise", "-a", str(tmp_path / "a.txt"), "-o", "m.txt"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "bertscore pairwise: error: -o m.txt: the matrix file must end in .tsv or .npy"
    ]


def test_a_huggingface_hub_log_line_shows_once():
    # Was twice: bare from huggingface_hub's own handler, and again as "bertscore: ..." through the CLI's.
    code = (
        "import argparse, logging, huggingface_hub.file_download\n"  # the module transformers downloads with
        "from fastbertscore.cli.common import guarded\n"
        "log = logging.getLogger('huggingface_hub.utils._http')\n"
        "guarded('bertscore', lambda args: log.warning('Retrying in 1s [Retry 1/5].'), argparse.Namespace(verbose=False))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["Retrying in 1s [Retry 1/5]."]


def test_a_folder_given_as_a_file_is_named_as_a_folder(tmp_path, capsys):
    from fastbertscore.cli.main import main

    (tmp_path / "r.txt").write_text("a cat\n", encoding="utf-8")
    code = main(["-c", str(tmp_path), "-r", str(tmp_path / "r.txt"), "-m", fb.DEFAULT_MODEL])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"bertscore: error: {tmp_path} is a folder: give a file with one text per line"]


@pytest.mark.parametrize("args", [["--memory_mb", "5"], ["-c", "cands.txt"], ["-c", "a", "-r", "b"]])
def test_python_m_fastbertscore_refuses_options_instead_of_scoring_them(args, capsys):
    # '--memory_mb 5' was scored as the text "--memory_mb" against "5"
    from fastbertscore.__main__ import main

    assert main(args) == 2
    err = capsys.readouterr().err
    assert "takes two texts, not options" in err and "bertscore -c CANDS -r REFS" in err and len(err.splitlines()) == 1


def test_python_m_fastbertscore_help_and_texts_after_two_dashes(capsys):
    from fastbertscore.__main__ import main

    assert main(["--help"]) == 0
    assert "usage: python -m fastbertscore" in capsys.readouterr().out
    assert main(["--", "-a dash first", "a dash first"]) == 0
    assert "candidate: -a dash first" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-c", "a", "-r", "b", "--bogus"], "bertscore: error: unrecognized arguments: --bogus"),
        (["-c", "a"], "bertscore: error: the following arguments are required: -r/--ref"),
        (["-c", "a", "-r", "b", "--long_inputs", "nope"], "bertscore: error: argument --long_inputs: invalid choice"),
        (  # what the user typed is quoted as typed, never translated into flags
            ["-c", "a", "-r", "b", "--long_inputs", "long_inputs=window"],
            "bertscore: error: argument --long_inputs: invalid choice: 'long_inputs=window'",
        ),
        (["pairwise", "-a", "x.txt"], "bertscore pairwise: error: the following arguments are required: -o/--out"),
        (
            ["correlate", "--data", "x.tsv", "--limit", "0"],
            "bertscore correlate: error: argument --limit: 0 is below 1",
        ),
        (["correlate", "--data", "x.tsv", "--bootstrap", "-1"], "bertscore correlate: error: argument --bootstrap: -1"),
    ],
)
def test_usage_errors_are_one_line_too(argv, message, capsys):
    from fastbertscore.cli.main import main

    with pytest.raises(SystemExit) as done:  # argparse's own errors printed its whole usage first
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(message) and err[0].endswith("--help lists the flags)"), err


@pytest.mark.parametrize(("flag", "name"), [("-b", "--batch_size"), ("--memory_mb", "--memory_mb")])
def test_a_checked_value_is_named_by_its_flag(flag, name, capsys):
    from fastbertscore.cli.main import main

    assert main(["-c", "a", "-r", "b", "-m", fb.DEFAULT_MODEL, flag, "0"]) == 2
    assert capsys.readouterr().err.strip() == f"bertscore: error: {name} must be a positive integer, got 0"


def test_correlate_refuses_a_group_column_the_file_lacks(tmp_path, capsys):
    from fastbertscore.cli.main import main

    data = tmp_path / "ratings.tsv"
    data.write_text("candidate\treference\thuman\tlp\nx\ty\t0.5\tde-en\n")
    assert main(["correlate", "--data", str(data), "--group", "lp,lnag", "-m", fb.DEFAULT_MODEL]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "bertscore: error: ratings.tsv: group column 'lnag' not found; the file has: " + (
        "candidate, reference, human, lp"
    )
