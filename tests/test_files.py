"""Files in and out: the readers, the atomic write, and the Hub's two content hashes."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time

import pytest
import torch

from fastbertscore.files import (
    STALE_TEMPORARY_SECONDS,
    file_lock,
    git_blob_id,
    pairs_from_rows,
    read_json_lines,
    read_lines,
    read_rows,
    sha256_of,
    split_lines,
    write_atomic,
    write_scores,
)
from fastbertscore.outputs import refuse_overwriting_inputs


def test_read_lines_keeps_blank_lines_so_line_numbers_stay_texts(tmp_path):
    path = tmp_path / "cands.txt"
    path.write_text(" a cat \n\nit rains\n", encoding="utf-8")
    assert read_lines(path) == ["a cat", "", "it rains"]
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    with pytest.raises(ValueError, match="cannot read .*latin1.txt"):
        read_lines(tmp_path / "latin1.txt")


# Line 1 holds U+2028, U+0085, a vertical tab, a form feed and a lone carriage return: all stay inside it.
SEPARATED = "a\u2028b\x85c\vd\fe\rf\r\n second \nthird"


def test_split_lines_cuts_at_newline_only():
    assert split_lines(SEPARATED) == ["a\u2028b\x85c\vd\fe\rf", " second ", "third"]
    assert split_lines("one\n") == split_lines("one") == ["one"]
    assert split_lines("one\n\n") == ["one", ""] and split_lines("") == [] and split_lines("\n") == [""]


def test_read_lines_cuts_a_file_at_newline_only(tmp_path):
    # str.splitlines() made 7 lines of these 3, so two 3-line files scored misaligned pairs.
    path = tmp_path / "cands.txt"
    path.write_bytes(SEPARATED.encode("utf-8"))
    assert read_lines(path) == ["a\u2028b\x85c\vd\fe\rf", "second", "third"]


def test_csv_fields_may_hold_line_breaks_and_unicode_separators(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text('candidate,reference\n"two\nlines","one\u2028line"\nplain,text\n', encoding="utf-8")
    rows = read_rows(path)
    assert rows == [
        {"candidate": "two\nlines", "reference": "one\u2028line"},
        {"candidate": "plain", "reference": "text"},
    ]
    assert pairs_from_rows(rows, "candidate", ["reference"]) == (["two\nlines", "plain"], ["one\u2028line", "text"])


def test_rows_without_a_reference_column_named_are_refused():
    with pytest.raises(ValueError, match="no reference column named"):
        pairs_from_rows([{"candidate": "a", "reference": "b"}], "candidate", [])


def test_rows_that_do_not_fit_the_columns_named_are_refused_naming_the_source_and_where_the_column_was_named():
    rows = [{"candidate": "a", "reference": "b"}, {"candidate": "c", "reference": ["d", 4]}]
    flags = {"source": "pairs.jsonl", "boxes": ("--candidate-column", "--reference-column")}
    with pytest.raises(ValueError, match="^the file has no rows: give it a row per candidate$"):
        pairs_from_rows([], "candidate", ["reference"])
    with pytest.raises(ValueError, match="^candidate column names 'cand', not a column of the file; it has: candidate"):
        pairs_from_rows(rows, "cand", ["reference"])
    with pytest.raises(ValueError, match="^--reference-column names 'ref', not a column of pairs.jsonl; it has: cand"):
        pairs_from_rows(rows, "candidate", ["ref"], **flags)
    with pytest.raises(ValueError, match=r"^--reference-column 'reference' holds \['d', 4\] in row 2 of pairs.jsonl"):
        pairs_from_rows(rows, "candidate", ["reference"], **flags)
    with pytest.raises(ValueError, match=r"^--candidate-column 'candidate' holds \['a'\] in row 1"):  # one text
        pairs_from_rows([{"candidate": ["a"], "reference": ["b"]}], "candidate", ["reference"], **flags)
    with pytest.raises(ValueError, match=r"^--reference-column 'reference' has no value in row 2 of pairs.jsonl$"):
        pairs_from_rows([rows[0], {"candidate": "c"}], "candidate", ["reference"], **flags)  # a line without the key
    assert pairs_from_rows(rows[:1] * 2, "candidate", ["reference", "candidate"]) == (["a", "a"], [["b", "a"]] * 2)


def test_a_text_over_max_chars_is_refused_naming_its_column_row_and_source_in_the_same_pass():
    rows = [{"candidate": "abc", "reference": "b"}, {"candidate": "c", "reference": ["d", "efgh"]}]
    with pytest.raises(ValueError, match=r"^reference column 'reference' holds a text of 4 characters in row 2 of "):
        pairs_from_rows(rows, "candidate", ["reference"], max_chars=3)
    with pytest.raises(ValueError, match="in row 1 of x.csv; the Space takes at most 2 per text$"):
        pairs_from_rows(rows, "candidate", ["reference"], source="x.csv", max_chars=2, taker="the Space")
    assert pairs_from_rows(rows, "candidate", ["reference"], max_chars=4)[0] == ["abc", "c"]
    with pytest.raises(TypeError, match="ref_columns must be a list of column names, got the str 'reference'"):
        pairs_from_rows(rows, "candidate", "reference")  # type: ignore[arg-type]


def test_json_lines_hold_any_value_and_unicode_line_separators(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text('["a\u2028b", "c"]\n\n{"k": 1}\n', encoding="utf-8")
    assert read_json_lines(path) == [["a\u2028b", "c"], {"k": 1}]
    path.write_text('["a"]\n\n["b",\n', encoding="utf-8")
    with pytest.raises(ValueError, match="samples.jsonl line 3: not valid JSON"):
        read_json_lines(path)


def test_json_lines_errors_name_the_line(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"candidate": "a", "reference": "b"}\n\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="pairs.jsonl line 3: expected a JSON object"):
        read_rows(path)


@pytest.mark.parametrize("durable", [True, False])
def test_write_atomic_replaces_whole_files_and_leaves_no_temporary(tmp_path, durable):
    path = tmp_path / "deep" / "table.tsv"
    write_atomic(path, "first\n", durable=durable)
    write_atomic(path, b"second\n", durable=durable)
    assert path.read_bytes() == b"second\n"
    assert [p.name for p in path.parent.iterdir()] == ["table.tsv"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "table.tsv"
    write_atomic(path, "old\n")
    with pytest.raises(TypeError):
        write_atomic(path, 42)  # not text or bytes: fails after the temporary file was made
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["table.tsv"]


def test_content_hashes_are_the_ones_git_and_the_hub_use(tmp_path):
    path = tmp_path / "baseline.tsv"
    path.write_bytes(b"LAYER,P,R,F\n0,0.1,0.2,0.3\n\x00\xff")
    git = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout.strip()
    assert git_blob_id(path) == git
    assert sha256_of(path) == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_written_files_get_the_process_umask_as_open_gives(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "scores.tsv", "P\tR\tF1\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "scores.tsv").stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600


def test_a_write_sweeps_what_dead_writers_of_the_same_target_left(tmp_path):
    stale, fresh, other = (tmp_path / ".out.tsv.dead0001.tmp", tmp_path / ".out.tsv.live0001.tmp", tmp_path / ".x.tmp")
    for path in (stale, fresh, other):
        path.write_text("partial")
    long_ago = time.time() - 2 * STALE_TEMPORARY_SECONDS
    os.utime(stale, (long_ago, long_ago))
    os.utime(other, (long_ago, long_ago))
    write_atomic(tmp_path / "out.tsv", "whole\n")
    assert not stale.exists() and fresh.exists() and other.exists()  # a live writer's file, and another target's


def test_write_scores_is_atomic_and_keeps_the_old_file_when_it_fails(tmp_path):
    path = tmp_path / "scores.tsv"
    write_scores(path, torch.tensor([0.5]), torch.tensor([0.25]), torch.tensor([0.125]))
    assert path.read_text() == "P\tR\tF1\n0.500000\t0.250000\t0.125000\n"
    with pytest.raises(ValueError):  # R is shorter than P: fails half-way through the rows
        write_scores(path, torch.tensor([0.1, 0.2]), torch.tensor([0.3]), torch.tensor([0.4, 0.5]))
    assert path.read_text() == "P\tR\tF1\n0.500000\t0.250000\t0.125000\n" and len(list(tmp_path.iterdir())) == 1


def test_an_output_may_not_be_an_input_by_any_name(tmp_path):
    data = tmp_path / "wmt.csv"
    data.write_text("x\n")
    os.link(data, tmp_path / "hard.csv")
    (tmp_path / "soft.csv").symlink_to(data)
    for output in (data, tmp_path / "sub" / ".." / "wmt.csv", tmp_path / "hard.csv", tmp_path / "soft.csv"):
        with pytest.raises(
            ValueError, match=f"^--out {output} would overwrite --data {data}: write it to another file$"
        ):
            refuse_overwriting_inputs({"--out": output}, {"--data": data})
    with pytest.raises(ValueError, match="--plot .*a.png would overwrite --out .*a.png"):
        refuse_overwriting_inputs({"--out": tmp_path / "a.png", "--plot": tmp_path / "a.png"}, {})
    refuse_overwriting_inputs({"--out": tmp_path / "wmt.md", "--plot": tmp_path / "plot.png"}, {"--data": data})


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444], ids=oct)
def test_a_rewritten_file_keeps_its_mode(tmp_path, mode):
    path = tmp_path / "private.tsv"
    path.write_text("old\n")
    path.chmod(mode)
    write_atomic(path, "new\n")
    assert path.read_text() == "new\n" and stat.S_IMODE(path.stat().st_mode) == mode  # never widened to 0644
    write_scores(path, torch.tensor([0.5]), torch.tensor([0.5]), torch.tensor([0.5]))
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_a_new_file_gets_the_mode_asked_for_whatever_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "entry", b"x", mode=0o640)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "entry").stat().st_mode) == 0o640


def test_the_lock_is_never_taken_through_a_planted_link(tmp_path):
    target = tmp_path / "victim.txt"
    target.write_text("keep me\n")
    manifest = tmp_path / "baselines" / "manifest.json"
    manifest.parent.mkdir()
    os.symlink(target, manifest.parent / ".manifest.json.lock")
    refused = pytest.raises(OSError, match=r"lock file .*\.manifest\.json\.lock is a symbolic link: remove it")
    with refused, file_lock(manifest):
        pass
    assert target.read_text() == "keep me\n"
    with file_lock(tmp_path / "other.json"):  # a lock file of its own is made, and held
        assert (tmp_path / ".other.json.lock").is_file()
