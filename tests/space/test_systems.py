"""fastbertscore.space.systems: what the Compare tab's paste boxes hold."""

from __future__ import annotations

import pytest

from fastbertscore.space import EMPTY_LINE, check_systems, gather_systems, parse_lines, parse_systems

LIMITS = {"max_systems": 3, "max_segments": 4, "max_chars": 20}


def test_blank_lines_between_systems_are_separators():
    # A blank line after each block made "baseline" 5 lines long against 4 references.
    text = "=== baseline\na\nb\nc\nd\n\n=== other\ne\nf\ng\nh\n\n\n"
    assert parse_systems(text) == {"baseline": ["a", "b", "c", "d"], "other": ["e", "f", "g", "h"]}
    check_systems(parse_systems(text), parse_lines("r1\nr2\n\nr3\nr4\n"), **LIMITS)


def test_an_empty_output_is_written_as_two_quotes():
    assert EMPTY_LINE == '""'
    assert parse_systems('=== A\none\n""\n  ""  \nfour\n') == {"A": ["one", "", "", "four"]}
    assert parse_lines('first\n""\n\nthird\n') == ["first", "", "third"]


def test_blocks_without_a_name_are_numbered_and_text_inside_is_kept():
    assert parse_systems("===\n  indented output\n=== \nx\n") == {"system 1": ["  indented output"], "system 2": ["x"]}
    assert parse_systems("") == {} and parse_systems(None) == {} and parse_lines(None) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("stray\n=== A\nx\n", "line 1 comes before the first '=== name' line"),
        ("=== A\nx\n\n=== A\ny\n", "two pasted systems are named 'A' \\(line 4\\)"),
    ],
)
def test_bad_pastes_name_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        parse_systems(text)


@pytest.mark.parametrize(
    "systems, refs, message",
    [
        ({"A": ["x"], "B": ["y"]}, ["", " "], "upload a references file or paste the references"),
        ({"A": ["x"]}, ["r"], "give 2 to 3 systems .* got 1"),
        ({k: ["x"] for k in "ABCD"}, ["r"], "give 2 to 3 systems .* got 4"),
        ({"A": ["x"] * 5, "B": ["y"] * 5}, ["r"] * 5, "the references have 5 lines; the Space compares at most 4"),
        (
            {"A": ["x", "y"], "B": ["y"]},
            ["r", "s"],
            'system B has 1 lines but the references have 2; .* empty output as ""',
        ),
        ({"A": ["x" * 21], "B": ["y"]}, ["r"], "a text of A or the references has 21 characters; at most 20"),
    ],
)
def test_check_systems_refuses_with_a_message(systems, refs, message):
    with pytest.raises(ValueError, match=message):
        check_systems(systems, refs, **LIMITS)


def test_gather_systems_keeps_files_first_then_pasted_and_refuses_a_second_name():
    files = [("a.txt", ["x", "y"]), ("b.txt", ["z", "w"])]
    assert list(gather_systems(files, "=== c\n1\n2\n")) == ["a.txt", "b.txt", "c"]
    with pytest.raises(ValueError, match="two system files are named a.txt"):
        gather_systems([*files, ("a.txt", [])], "")
    with pytest.raises(ValueError, match="a file and a pasted system are both named b.txt"):
        gather_systems(files, "=== b.txt\n1\n2\n")
