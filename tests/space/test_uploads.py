"""fastbertscore.space.uploads: uploads read in bounded memory (reading stops past the row limit), every line that
does not parse named in one line, and result files a spreadsheet opens without running anything."""

from __future__ import annotations

import csv
import json
import tracemalloc

import pytest

from fastbertscore import space
from fastbertscore.space.limits import MAX_REQUEST_BYTES, MAX_ROWS, MAX_UPLOAD_BYTES
from fastbertscore.space.uploads import check_total, lines_of, rows_of, write_results


def _peak_mb(read) -> float:
    """Peak Python allocations while ``read()`` runs (it is expected to raise ``ValueError``), in MB."""
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as raised:
            read()
        return tracemalloc.get_traced_memory()[1] / 1e6, str(raised.value)
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_reading_stops_at_the_row_limit_plus_one(tmp_path, suffix):
    # A 2 MB CSV of tiny rows raised peak memory by about 200 MB before "999990 rows" was refused.
    path = tmp_path / f"tiny{suffix}"
    rows = "".join(f"a{k},b\n" for k in range(400_000)) if suffix == ".csv" else '{"a": 1}\n' * 400_000
    path.write_text(("c,r\n" if suffix == ".csv" else "") + rows, encoding="utf-8")
    assert path.stat().st_size < MAX_UPLOAD_BYTES
    peak, message = _peak_mb(lambda: rows_of(str(path)))
    assert message == f"{path.name} has more than {MAX_ROWS:,} rows; the Space scores at most {MAX_ROWS:,} per batch"
    assert peak < 5, f"{peak:.1f} MB held to refuse it"
    assert len(rows_of(str(path), max_rows=400_000)) == 400_000  # the rows are all there


def test_a_text_file_is_read_to_the_segment_limit_plus_one(tmp_path):
    path = tmp_path / "refs.txt"
    path.write_text("x\n" * 1_000_000, encoding="utf-8")
    peak, message = _peak_mb(lambda: lines_of(str(path)))
    assert message == f"refs.txt has more than {MAX_ROWS:,} lines; the Space compares at most {MAX_ROWS:,} segments"
    assert peak < 5
    path.write_text("a\r\n\n b \u2028c\n", encoding="utf-8")  # as files.read_lines: blank kept, cut at "\n" only
    assert lines_of(str(path)) == ("refs.txt", ["a", "", "b \u2028c"])


@pytest.mark.parametrize(
    "line, says",
    [
        ("[" * 200_000, "not valid JSON here (it nests too deeply)"),  # RecursionError: a traceback in the log
        ('{"a": ' + "1" * 5000 + "}", "not valid JSON here (Exceeds the limit (4300 digits)"),
        ('{"a": 1', "not valid JSON (Expecting ',' delimiter)"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_a_line_that_does_not_parse_is_one_line_naming_it(tmp_path, line, says):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"candidate": "a", "reference": "b"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(space.SpaceError) as raised:
        space.on_model_thread(space.score_file)(str(path), "candidate", "reference")
    message = str(raised.value)
    assert message.startswith(f"rows.jsonl line 3: {says}") and "\n" not in message and len(message) < 200


def test_a_csv_error_names_its_line(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("candidate,reference\na,b\nc," + "d" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^long\.csv is not a CSV/TSV file the Space can read: field .*, at line 3$"):
        rows_of(str(path))


def test_a_compare_requests_files_are_bounded_together(tmp_path, model_builds):
    # Nine files of 10 MB each were read whole: about 2 GB of memory for one request.
    files = []
    for k in range(3):
        files.append(tmp_path / f"s{k}.txt")
        with open(files[-1], "wb") as f:
            f.truncate(MAX_REQUEST_BYTES // 3 + 1)  # sparse: no disk, and never read
    total = 3 * (MAX_REQUEST_BYTES // 3 + 1)
    with pytest.raises(ValueError, match=rf"hold {total:,} bytes together; the Space reads at most"):
        check_total([str(f) for f in files])
    with pytest.raises(space.SpaceError, match="bytes together"):
        space.on_model_thread(space.compare_systems)(None, "a", [str(f) for f in files], "", "paired bootstrap", 0, 1)
    assert model_builds == []


def test_result_files_escape_what_a_spreadsheet_would_run(tmp_path):
    # A cell beginning with =, +, - or @ ran as a formula in a spreadsheet.
    texts = ['=HYPERLINK("http://x")', "+1", "-2 points", "@SUM(A1)", "\tTab", "\rCR", "plain", "a=b"]
    path = write_results([["candidate", "F1"], *[[t, -0.5] for t in texts]])
    with open(path, encoding="utf-8", newline="") as f:
        read = list(csv.reader(f))
    assert [row[0] for row in read[1:]] == [*["'" + t for t in texts[:6]], "plain", "a=b"]
    assert {row[1] for row in read[1:]} == {"-0.5"}  # numbers are numbers


def test_the_batch_tabs_download_is_escaped(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({"candidate": "=1+1", "reference": "@cmd"}) + "\n", encoding="utf-8")
    view = space.score_file(str(path), "candidate", "reference")
    with open(view.download, encoding="utf-8", newline="") as f:
        row = list(csv.reader(f))[1]
    assert row[-2:] == ["'=1+1", "'@cmd"] and view.results[1][0][-2:] == [
        "=1+1",
        "@cmd",
    ]  # the page shows them as typed
