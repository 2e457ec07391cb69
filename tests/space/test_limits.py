"""fastbertscore.space.limits: every bound of the Space is a named constant, listed in docs/space.md, and a request
over one is refused with a sentence naming it before any model is loaded."""

from __future__ import annotations

import json

import pytest
from paths import REPO

from fastbertscore import space
from fastbertscore.space.limits import (
    LIMITS,
    MAX_CHARS,
    MAX_PAIRS,
    MAX_REFERENCES,
    MAX_ROWS,
    MAX_SAMPLES,
    MAX_SEED,
    MAX_SYSTEMS,
    MAX_UPLOAD_BYTES,
    check_samples,
    check_seed,
)


def test_docs_list_every_limit_with_its_value():
    text = (REPO / "docs" / "space.md").read_text(encoding="utf-8")
    missing = [name for name, value in LIMITS.items() if f"| `{name}` | {value:,} |" not in text]
    assert not missing, f"docs/space.md's Limits table lacks (or has another value for) {missing}"


def _pasted(n_systems: int, n_segments: int) -> str:
    return "".join(f"=== s{k}\n" + "a\n" * n_segments for k in range(n_systems))


def _write(path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def _sparse(path, size: int) -> str:
    """A file of ``size`` bytes that takes no disk (reading it would find NULs, and a size check need not)."""
    with open(path, "wb") as f:
        f.truncate(size)
    return str(path)


CASES = {
    "resamples": lambda tmp: (
        lambda: space.compare_systems(None, "a\nb", None, _pasted(2, 2), "paired bootstrap", 100_000_000, 1),
        f"at most {MAX_SAMPLES:,}",
    ),
    "system files, before any is read": lambda tmp: (
        lambda: space.compare_systems(
            None, "a", [str(tmp / f"missing{k}.txt") for k in range(MAX_SYSTEMS + 1)], "", "paired bootstrap", 0, 1
        ),
        f"at most {MAX_SYSTEMS}",
    ),
    "segments x systems": lambda tmp: (
        lambda: space.compare_systems(None, "r\n" * MAX_ROWS, None, _pasted(5, MAX_ROWS), "paired bootstrap", 0, 1),
        f"at most {MAX_PAIRS:,} per request",
    ),
    "a pasted box": lambda tmp: (
        lambda: space.compare_systems(None, "a\n" * MAX_UPLOAD_BYTES, None, _pasted(2, 1), "paired bootstrap", 0, 1),
        f"at most {MAX_UPLOAD_BYTES:,}",
    ),
    "a reference file's size": lambda tmp: (
        lambda: space.compare_systems(
            _sparse(tmp / "refs.txt", MAX_UPLOAD_BYTES + 1), "", None, _pasted(2, 1), "paired bootstrap", 0, 1
        ),
        "at most 10 MB",
    ),
    "a batch file's size": lambda tmp: (
        lambda: space.score_file(_sparse(tmp / "big.csv", MAX_UPLOAD_BYTES + 1), "candidate", "reference"),
        "at most 10 MB",
    ),
    "reference columns, before the file is read": lambda tmp: (
        lambda: space.score_file(str(tmp / "missing.csv"), "candidate", ",".join(["reference"] * 5000)),
        f"at most {MAX_REFERENCES} references per row",
    ),
    "a JSON list in a cell": lambda tmp: (
        lambda: space.score_file(
            _write(tmp / "list.jsonl", json.dumps({"candidate": "a", "reference": ["b"] * 5000}) + "\n"),
            "candidate",
            "reference",
        ),
        f"Row 1 has 5,000 references; the Space takes at most {MAX_REFERENCES} per row",
    ),
    "rows x references": lambda tmp: (
        lambda: space.score_file(
            _write(tmp / "wide.csv", "candidate,r1,r2,r3,r4,r5\n" + "a,b,c,d,e,f\n" * MAX_ROWS),
            "candidate",
            "r1,r2,r3,r4,r5",
        ),
        f"at most {MAX_PAIRS:,} per request",
    ),
    "references of a pair": lambda tmp: (
        lambda: space.score_pair("a", "b\n" * (MAX_REFERENCES + 1)),
        f"at most {MAX_REFERENCES} references",
    ),
    "references of /score": lambda tmp: (
        lambda: space.score_api("a", "b\n" * (MAX_REFERENCES + 1)),
        f"at most {MAX_REFERENCES} references",
    ),
    "a text": lambda tmp: (lambda: space.score_api("a" * (MAX_CHARS + 1), "b"), f"at most {MAX_CHARS}"),
}


@pytest.mark.parametrize("case", CASES)
def test_an_over_limit_request_is_refused_naming_the_limit_before_any_model_loads(case, tmp_path, model_builds):
    call, limit = CASES[case](tmp_path)
    with pytest.raises(space.SpaceError) as raised:
        space.on_model_thread(call)()
    message = str(raised.value)
    assert limit in message and "\n" not in message and str(tmp_path) not in message
    assert model_builds == []


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_number_boxes_refuse_what_is_not_a_finite_whole_number_naming_the_box(value):
    with pytest.raises(ValueError, match=r"^Resamples / trials must be a whole number; got "):
        check_samples(value)
    with pytest.raises(ValueError, match=r"^Seed must be a whole number; got "):
        check_seed(value)


@pytest.mark.parametrize(
    "seed, message",
    [
        (-1, "Seed must be from 0 to 9,223,372,036,854,775,807 (2**63 - 1); got -1"),
        (2**63, "Seed must be from 0 to 9,223,372,036,854,775,807 (2**63 - 1); got 9,223,372,036,854,775,8…"),
        (float(10**300), "Seed must be from 0 to 9,223,372,036,854,775,807 (2**63 - 1); got 1,000,000,000,000,000,0…"),
    ],
)
def test_a_seed_out_of_range_is_refused_before_any_scoring_and_echoed_in_part(seed, message, model_builds):
    # A seed of -1 failed only after all the scoring; 300-digit seeds were accepted and echoed.
    with pytest.raises(space.SpaceError) as raised:
        space.on_model_thread(space.compare_systems)(None, "a\nb", None, _pasted(2, 2), "paired bootstrap", 0, seed)
    assert str(raised.value) == message and model_builds == []
    assert check_seed(MAX_SEED) == MAX_SEED and check_seed(0.0) == 0


def test_resamples_are_echoed_in_part():
    with pytest.raises(ValueError, match=r"^Resamples / trials is 1,000,000,000,000,000,0…; the Space runs at most"):
        check_samples(10**300)
