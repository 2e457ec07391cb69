"""fastbertscore.space.inputs: the Pair and Batch tabs' boxes are refused with a message naming the box before any
model work."""

from __future__ import annotations

import pytest

from fastbertscore import space
from fastbertscore.space import batch_pairs, check_text, parse_layer, parse_references
from fastbertscore.space.inputs import check_lang, known_langs


def test_references_are_the_non_blank_lines():
    assert parse_references("one\n\n  \ntwo\n", 12) == ["one", "two"]
    assert check_text("x" * 10, "The candidate", 10) == "x" * 10


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "The candidate is empty: type some text"),
        ("  \n", "The candidate is empty"),
        (None, "The candidate is empty"),
        ("x" * 11, "The candidate has 11 characters; the Space takes at most 10 per text"),
    ],
)
def test_bad_texts_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        check_text(text, "The candidate", 10)


@pytest.mark.parametrize("box, layer", [("", None), (None, None), (" 4 ", 4), (0, 0), ("12", 12)])
def test_layer_box(box, layer):
    assert parse_layer(box) == layer


@pytest.mark.parametrize("box", ["-1", "4.5", "four"])
def test_a_layer_that_is_no_whole_number_is_refused(box):
    with pytest.raises(ValueError, match=f"Layer must be a whole number such as 4, .* got {box!r}"):
        parse_layer(box)


@pytest.mark.parametrize(
    "box, message",
    [
        ("\u00b2", r"^Layer must be a whole number such as 4, or empty for the model's default; got '²'$"),  # isdigit
        ("9" * 5000, r"^Layer '9999999999999999999999… is past the depth of every model the Space serves$"),
        ("x" * 2_000_000, r"^Layer must be a whole number .*; got 'x{22}…$"),
    ],
)
def test_a_layer_box_is_echoed_in_part_and_never_read_past_three_digits(box, message):
    # int("²") raised deep inside; 5,000 digits raised int's own conversion limit; both were echoed whole.
    with pytest.raises(ValueError, match=message):
        parse_layer(box)


def test_the_language_box_takes_known_codes_only_naming_the_box():
    # A 300-character language read "Could not load the model ... File name too long"; 2 MB ones filled the notes.
    assert check_lang(" EN ") == "en" and check_lang("en-sci") == "en-sci" and check_lang("") is None
    assert {"en", "zh", "de", "fi", "lv", "en-sci"} <= known_langs()
    for box in ["english", "x" * 300, "../en", "e n"]:
        with pytest.raises(ValueError) as raised:
            check_lang(box)
        message = str(raised.value)
        assert message.startswith("Language (for rescaling) '") and "is not a language code the Space knows" in message
        assert len(message) < 200


def test_batch_pairs_reads_the_columns_and_groups_the_references():
    rows = [{"candidate": "a", "reference": "b", "second": "c"}, {"candidate": "d", "reference": "e", "second": "f"}]
    cands, refs, groups = batch_pairs(rows, " candidate ", "reference, second", max_rows=2, max_chars=5)
    assert cands == ["a", "d"] and groups == [["b", "c"], ["e", "f"]] and refs == groups
    cands, refs, groups = batch_pairs(rows, "candidate", "reference", max_rows=2, max_chars=5)
    assert refs == ["b", "e"] and groups == [["b"], ["e"]]


@pytest.mark.parametrize(
    "rows, message",
    [
        ([{"candidate": "a", "reference": "b"}] * 3, "the file has 3 rows; the Space scores at most 2 per batch"),
        (
            [{"candidate": "a", "reference": "b"}, {"candidate": "a", "reference": "b" * 6}],
            r"Reference column\(s\) 'reference' holds a text of 6 characters in row 2 of the file; the Space takes",
        ),
        (
            [{"candidate": "a" * 7, "reference": ["b", "c"]}],
            "Candidate column 'candidate' holds a text of 7 characters in row 1 of the file",
        ),
        ([{"candidate": "a", "ref": "b"}], "reference"),
    ],
)
def test_batch_pairs_refuses_with_a_message(rows, message):
    with pytest.raises(ValueError, match=message):
        batch_pairs(rows, "candidate", "reference", max_rows=2, max_chars=5)


@pytest.mark.parametrize("box", ["", " ", " , "])
def test_an_empty_reference_box_is_refused_naming_the_box(box):
    with pytest.raises(ValueError, match=r"^Reference column\(s\) is empty: name the column"):
        batch_pairs([{"candidate": "a", "reference": "b"}], "candidate", box)


PAIRS = "candidate,reference\na,b\n"


@pytest.mark.parametrize(
    "name, text, cand_column, ref_columns, message",
    [
        ("empty.csv", "", "candidate", "reference", "empty.csv has no rows: give it a row per candidate"),
        ("header.csv", "candidate,reference\n", "candidate", "reference", "header.csv has no rows: give it a row"),
        ("blank.jsonl", "\n", "candidate", "reference", "blank.jsonl has no rows: give it a row"),
        (
            "pairs.csv",
            PAIRS,
            "cand",
            "reference",
            "Candidate column names 'cand', not a column of pairs.csv; it has: candidate, reference",
        ),
        (
            "pairs.csv",
            PAIRS,
            "candidate",
            "reference, second",
            "Reference column(s) names 'second', not a column of pairs.csv; it has: candidate, reference",
        ),
        (
            "short.csv",
            PAIRS + "c\n",
            "candidate",
            "reference",
            "Reference column(s) 'reference' has no value in row 2 of short.csv",
        ),
        (
            "number.jsonl",
            '{"candidate": 3, "reference": "b"}\n',
            "candidate",
            "reference",
            "Candidate column 'candidate' holds 3 in row 1 of number.jsonl, not text",
        ),
        (
            "list.jsonl",
            '{"candidate": "a", "reference": "b"}\n{"candidate": "a", "reference": []}\n',
            "candidate",
            "reference",
            "Reference column(s) 'reference' holds [] in row 2 of list.jsonl, not text",
        ),
    ],
)
def test_a_batch_file_that_does_not_fit_the_column_boxes_is_refused_naming_the_box(
    tmp_path, name, text, cand_column, ref_columns, message
):
    # "column 'cand' not found", "row 2: 'reference' is None, not text", "The file has no rows": which box, which file?
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(space.SpaceError) as raised:
        space.on_model_thread(space.score_file)(str(tmp_path / name), cand_column, ref_columns)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


@pytest.mark.parametrize("box", ["", " ", None])
def test_an_empty_candidate_box_is_refused_naming_the_box_before_the_file_is_read(tmp_path, box):
    # "column '' not found" once the file was read; None (through the API) failed on the server.
    with pytest.raises(
        space.SpaceError, match=r"^Candidate column is empty: name the column that holds the candidates$"
    ):
        space.on_model_thread(space.score_file)(str(tmp_path / "missing.csv"), box, "reference")
    with pytest.raises(ValueError, match=r"^Candidate column is empty"):
        batch_pairs([{"candidate": "a", "reference": "b"}], box, "reference")


def test_cut_note_names_the_texts_past_the_window():
    import fastbertscore as fb
    from fastbertscore.space import cut_note

    scorer = fb.BERTScorer(model_type=fb.DEFAULT_MODEL)
    long = "The committee discussed the budget and the plans for next year. " * 62
    assert len(scorer.tokenizer(long)["input_ids"]) > scorer.max_length  # the premise: this text is cut
    assert cut_note(scorer, {"candidate": "A cat.", "reference": "A dog."}) == ""
    assert cut_note(scorer, {"candidate": long, "reference": "A dog."}).startswith(
        f"The candidate is longer than the model's {scorer.max_length} tokens"
    )
    assert cut_note(scorer, {"candidate": long, "reference": long}).startswith("The candidate and the reference are")
    windowed = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, long_inputs="window")
    assert cut_note(windowed, {"candidate": long}) == ""  # scored in full: nothing to say
