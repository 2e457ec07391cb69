"""fastbertscore.space.handlers: what each of the Space's buttons does, called directly (no browser, no Gradio
server), on the embedded MiniLM; every number is checked against the engine's own ``score``/``compare``."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import MINILM, REPO
from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore import space

CAND = "The president met the minister in Paris."
REFS = ["The president met the prime minister in Paris.", "In Paris, the minister and the president met."]
SYSTEMS = {
    "baseline": ["The cat sat on the mat.", "It is raining.", "The meeting was delayed."],
    "other": ["A cat sat.", "Rain falls.", "The meeting was postponed."],
}
SEGMENT_REFS = ["The cat sat on the mat.", "It rains.", "The meeting was postponed."]


@pytest.fixture(scope="module")
def rescaling():
    return fb.BERTScorer(model_type=MINILM, lang="en", rescale_with_baseline=True)


def test_the_pair_handler_scores_as_the_engine_does(rescaling):
    view = space.score_pair(CAND, "\n".join(REFS))
    expected = rescaling.score_result([CAND], [REFS])
    assert_scores_close(view.result.raw, expected.raw)
    assert_scores_close(view.result.rescaled, expected.rescaled, baseline=rescaling.baseline_vals)
    assert view.hashcode == rescaling.hash and view.kind == "rescaled"
    assert [row[0] for row in view.scores[1]] == ["raw", "rescaled"]
    best = int(expected.best_reference[2][0])
    assert view.counted == space.counted_note(expected, 2) and "of 2" in view.counted
    # The missed-words panel shows the reference that counted for F, whole.
    assert "".join(text for text, _ in view.missing) == REFS[best]
    assert view.heatmap is not None and view.matches[1]


def test_a_raw_request_reads_the_raw_numbers_under_the_raw_hash(rescaling):
    view = space.score_pair(CAND, REFS[0], space.Options(do_rescale=False))
    raw = fb.BERTScorer(model_type=MINILM, lang="en")
    assert_scores_close(view.result.scores, raw.score([CAND], [REFS[0]]))
    assert view.result.rescaled is None and view.hashcode == raw.hash and view.kind == "raw"


def test_the_score_endpoint_returns_the_engines_json():
    out = space.score_api(CAND, "\n".join(REFS))
    (P, R, F), hashcode = fb.score([CAND], [REFS], model_type=MINILM, return_hash=True)
    assert_scores_close([[out["precision"]], [out["recall"]], [out["f1"]]], (P, R, F))
    assert out["hashcode"] == hashcode and set(out["best_reference"]) == {"precision", "recall", "f1"}
    assert "_L3_" in space.score_api(CAND, REFS[0], MINILM, "3")["hashcode"]


def test_the_batch_handler_scores_every_row_and_writes_the_same_table(tmp_path, rescaling):
    rows = [
        {"candidate": "The cat sat on the mat.", "reference": "A cat was sitting on the mat.", "second": "A cat."},
        {"candidate": "It is raining.", "reference": "Rain is falling.", "second": "It rains."},
    ]
    data = tmp_path / "pairs.tsv"
    with data.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t")
        writer.writeheader()
        writer.writerows(rows)
    view = space.score_file(str(data), "candidate", "reference, second")
    cands, groups = [r["candidate"] for r in rows], [[r["reference"], r["second"]] for r in rows]
    expected = rescaling.score_result(cands, groups)
    assert_scores_close(view.result.raw, expected.raw)
    assert_scores_close(view.result.rescaled, expected.rescaled, baseline=rescaling.baseline_vals)
    assert view.result.hash == rescaling.hash and rescaling.hash in view.summary
    with open(view.download, encoding="utf-8", newline="") as f:
        written = list(csv.reader(f))
    assert written[0] == view.results[0] and [r[-2] for r in written[1:]] == cands
    assert [float(r[written[0].index("F1 (raw)")]) for r in written[1:]] == [r[3] for r in view.results[1]]


def test_the_compare_handler_equals_compare(rescaling):
    pasted = "".join(f"=== {name}\n" + "".join(f"{x}\n" for x in lines) + "\n" for name, lines in SYSTEMS.items())
    view = space.compare_systems(None, "\n".join(SEGMENT_REFS), None, pasted, "paired bootstrap", 200, 7)
    expected = fb.compare(
        SYSTEMS, SEGMENT_REFS, model_type=MINILM, lang="en", rescale_with_baseline=True, n_samples=200, seed=7
    )
    assert view.comparison.signature == expected.signature and expected.signature in view.summary
    for ours, theirs in zip(view.comparison.systems, expected.systems, strict=True):
        assert ours.name == theirs.name
        assert_scores_close([[x] for x in ours.scores], [[x] for x in theirs.scores], baseline=rescaling.baseline_vals)
    assert view.comparison.systems[0].p_value is None and view.comparison.systems[1].p_value is not None
    assert view.table == space.compare_table(view.comparison, True)


def test_an_unknown_test_is_refused_not_run_as_the_bootstrap():
    pasted = "".join(f"=== {name}\n" + "".join(f"{x}\n" for x in lines) + "\n" for name, lines in SYSTEMS.items())
    with pytest.raises(ValueError, match="Test 't-test' is not one of: paired bootstrap, approximate randomization"):
        space.compare_systems(None, "\n".join(SEGMENT_REFS), None, pasted, "t-test", 200, 7)


def test_uploaded_system_files_are_named_by_their_file(tmp_path):
    files = []
    for name, lines in SYSTEMS.items():
        files.append(tmp_path / f"{name}.txt")
        files[-1].write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    (tmp_path / "refs.txt").write_text("".join(f"{x}\n" for x in SEGMENT_REFS), encoding="utf-8")
    view = space.compare_systems(
        str(tmp_path / "refs.txt"), "", [str(f) for f in files], "", "none (intervals only)", 0, 1
    )
    assert [s.name for s in view.comparison.systems] == ["baseline.txt", "other.txt"]
    assert view.comparison.test is None


def test_references_both_uploaded_and_pasted_are_refused_not_half_dropped(tmp_path):
    (tmp_path / "refs.txt").write_text("".join(f"{x}\n" for x in SEGMENT_REFS), encoding="utf-8")
    pasted = "".join(f"=== {name}\n" + "".join(f"{x}\n" for x in lines) + "\n" for name, lines in SYSTEMS.items())
    with pytest.raises(ValueError, match="The references were both uploaded and pasted: give them one way"):
        space.compare_systems(
            str(tmp_path / "refs.txt"), "\n".join(SEGMENT_REFS), None, pasted, "paired bootstrap", 0, 1
        )


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: space.score_pair("", "a reference"), "The candidate is empty"),
        (lambda: space.score_pair("a", "b", space.Options(layer="x")), "Layer must be a whole number"),
        (lambda: space.score_file(None, "candidate", "reference"), "Upload a .csv, .tsv or .jsonl file first"),
        (lambda: space.score_api("a", "b", "no-such-org/no-such-model"), "no-such-org/no-such-model"),
    ],
)
def test_a_failure_reaches_the_page_as_one_line(call, message):
    with pytest.raises(space.SpaceError) as raised:
        space.on_model_thread(call)()
    assert message in str(raised.value) and "\n" not in str(raised.value) and "Traceback" not in str(raised.value)


def test_importing_the_space_makes_no_folder_and_the_first_result_makes_one(tmp_path):
    # app.py made its result folder at import; now the first result file makes it.
    code = (
        "import os, fastbertscore.space\n"
        "from fastbertscore.space.uploads import write_results\n"
        "print(len(os.listdir(os.environ['TMPDIR'])))\n"
        "path = write_results([['a'], [1]])\n"
        "print(os.path.relpath(path, os.environ['TMPDIR']).count(os.sep), open(path).read().split())\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["0", "1 ['a', '1']"]


def test_a_csv_the_csv_module_refuses_is_bad_input_named_by_its_file(tmp_path):
    # A field past the csv module's limit read "score_file failed: Error: field larger than field limit".
    data = tmp_path / "long.csv"
    data.write_text("candidate,reference\n" + "a," + "b" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(space.SpaceError, match=r"^long\.csv is not a CSV/TSV file the Space can read: field larger"):
        space.on_model_thread(space.score_file)(str(data), "candidate", "reference")


def test_layer_999_is_refused_before_any_weights_load(monkeypatch):
    from fastbertscore.models import encoder

    loads = []
    load = encoder.load_weights
    monkeypatch.setattr(encoder, "load_weights", lambda *args, **kw: loads.append(args[1]) or load(*args, **kw))
    fb.clear_model_cache()
    with pytest.raises(space.SpaceError, match=rf"num_layers=999 is out of range for {MINILM} \(0\.\.6;"):
        space.on_model_thread(space.score_api)("a", "b", MINILM, "999")
    assert loads == []
    space.score_api("a", "b", MINILM, "6")  # the last layer is in range, and loads
    assert len(loads) == 1


def _not_utf8(path: Path) -> str:
    path.write_bytes(b"caf\xe9\n")
    return str(path)


@pytest.mark.parametrize(
    "call, name",
    [
        (
            lambda tmp: space.compare_systems(
                _not_utf8(tmp / "refs.txt"), "", None, "=== a\nx\n=== b\ny\n", "paired bootstrap", 0, 1
            ),
            "refs.txt",
        ),
        (
            lambda tmp: space.compare_systems(
                None, "r", [_not_utf8(tmp / "a.txt"), _not_utf8(tmp / "b.txt")], "", "paired bootstrap", 0, 1
            ),
            "a.txt",
        ),
        (lambda tmp: space.score_file(_not_utf8(tmp / "pairs.csv"), "candidate", "reference"), "pairs.csv"),
        (lambda tmp: space.score_file(str((tmp / "folder.csv").mkdir() or tmp / "folder.csv"), "c", "r"), "folder.csv"),
    ],
)
def test_a_failed_upload_is_named_by_its_file_never_its_server_path(call, name, tmp_path):
    # "cannot read /tmp/gradio/…/refs.txt": the server's upload folder, shown to every visitor.
    with pytest.raises(space.SpaceError) as raised:
        space.on_model_thread(call)(tmp_path)
    message = str(raised.value)
    assert name in message and "annot read" in message and str(tmp_path) not in message and "/" not in message


def test_an_unexpected_error_is_a_fixed_sentence_its_detail_in_the_log_only(caplog):
    # Its first line reached the page, server paths and all: after a colon, under ~, with spaces, in Windows form.
    detail = "[Errno 13] Permission denied: file:/srv/space/cache/x.json, ~/.cache/y.bin, C:\\Users\\me\\z.csv"

    def fails():
        raise OSError(detail)

    with pytest.raises(space.SpaceError) as raised:
        space.on_model_thread(fails)()
    assert str(raised.value) == "fails failed on the server; what went wrong is in its log, not shown here"
    assert detail in caplog.text


@pytest.mark.parametrize(
    "text, shown",
    [
        ("cannot read '/srv/my space/refs.txt'", "cannot read 'refs.txt'"),
        ("Errno 2: file:/srv/space/cache/x.json", "Errno 2: file:x.json"),
        ("no such file ~/.cache/huggingface/token here", "no such file token here"),
        ('in "C:\\Users\\me\\data\\pairs.csv"', 'in "pairs.csv"'),
        ("at C:/Users/me/pairs.csv", "at pairs.csv"),
        ("at \\\\server\\share\\pairs.csv", "at pairs.csv"),
        (f"{MINILM} at https://huggingface.co/{MINILM}", f"{MINILM} at https://huggingface.co/{MINILM}"),
    ],
)
def test_no_message_shows_a_server_path(text, shown):
    assert space.hide_paths(text) == shown


def test_the_check_step_does_no_model_work(model_builds):
    # The page runs each handler's checks on the request's own thread and hands its model step (a Job) to the model
    # thread: a refusal never waits behind another user's scoring.
    steps: list[space.Job] = []
    space.score_pair(CAND, REFS[0], run=steps.append)
    space.score_api(CAND, REFS[0], run=steps.append)
    space.compare_systems(None, "a\nb", None, "=== x\nc\nd\n=== y\ne\nf\n", "paired bootstrap", 10, 1, run=steps.append)
    assert model_builds == [] and len(steps) == 3 and all(isinstance(step, space.Job) for step in steps)
    assert steps[1]() == space.score_api(CAND, REFS[0]) and len(model_builds) >= 1


def test_the_page_names_texts_the_tokenizer_cannot_read(tmp_path):
    # A candidate of zero-width characters scored raw 0 (rescaled -0.54), and 😀 against 🚀 F = 1.000, with no note.
    view = space.score_pair("\u200b\u200b\u200b", "A cat sat on the mat.")
    assert "The candidate is empty after tokenizing (the tokenizer keeps none of its characters)" in view.note
    view = space.score_pair("😀", "🚀")
    assert float(view.result.raw[2][0]) > 0.999
    assert "2 texts (first: the candidate) are mostly the unknown token [UNK]: " in view.note
    path = tmp_path / "pairs.csv"
    path.write_text("candidate,reference\nA cat sat.,A cat was sitting.\n😀 🚀,A dog ran.\n", encoding="utf-8")
    assert (
        "Row 2's candidate is mostly the unknown token [UNK]"
        in space.score_file(str(path), "candidate", "reference").summary
    )
    compared = space.compare_systems(None, "a\nb", None, "=== x\n\u200b\nc\n=== y\nd\ne\n", "paired bootstrap", 10, 1)
    assert "Line 1 of x is empty after tokenizing" in compared.summary


def test_a_request_past_its_deadline_stops_and_frees_the_model_thread(monkeypatch, tmp_path):
    from fastbertscore.space import runner

    path = tmp_path / "pairs.csv"
    path.write_text("candidate,reference\n" + "".join(f"A cat sat {k}.,A cat was sitting.\n" for k in range(50)))
    jobs: list[space.Job] = []
    space.score_file(str(path), "candidate", "reference", run=jobs.append)
    job = jobs[0]
    monkeypatch.setattr(runner, "DEADLINE_S", -1)  # past at its first encoder batch, whatever the machine's speed
    with pytest.raises(space.SpaceError, match=f"^{runner.STOPPED}$"):
        runner.run_job(job, "score_file", owner="a visitor")
    monkeypatch.setattr(runner, "DEADLINE_S", 3600)
    assert runner.run_job(job, "score_file", owner="a visitor").result.raw[2].shape == (50,)  # the thread is free
