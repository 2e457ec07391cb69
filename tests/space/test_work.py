"""fastbertscore.space.work: a request's work, counted on its own thread with the model's tokenizer and weighed by
the model's cost per token, refused over the budget before any model work; and the notes on texts the tokenizer
cannot read."""

from __future__ import annotations

import csv
import random

import pytest
from paths import MINILM

import fastbertscore as fb
from fastbertscore import space
from fastbertscore.models.loading import load_tokenizer
from fastbertscore.space import work
from fastbertscore.space.limits import WORK_BUDGET


def _words(k: int, n: int) -> str:
    rng = random.Random(k)
    return " ".join(f"{rng.choice(['alpha', 'beta', 'gamma', 'delta'])}{rng.randrange(10**6)}" for _ in range(n))


def test_the_issues_file_is_refused_naming_the_budget_and_what_it_needs(tmp_path, model_builds):
    # 2,000 rows × (1 candidate + 4 references) of distinct long texts passed every count limit and held the
    # model thread for about 50 minutes.
    path = tmp_path / "heavy.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["candidate", "r1", "r2", "r3", "r4"])
        out.writerows([_words(5 * row + k, 70) for k in range(5)] for row in range(2000))
    assert path.stat().st_size < space.MAX_UPLOAD_BYTES
    with pytest.raises(space.SpaceError) as raised:
        space.on_model_thread(space.score_file)(str(path), "candidate", "r1,r2,r3,r4")
    message = str(raised.value)
    assert message.startswith("This request needs about ") and message.count(";") == 1 and "\n" not in message
    assert f"the Space does at most {WORK_BUDGET:,} per request: score fewer or shorter texts" in message
    needed = int(message.split("about ")[1].split(" ")[0].replace(",", ""))
    assert needed > 10 * WORK_BUDGET
    assert model_builds == []


def test_work_is_the_distinct_texts_tokens_each_cut_at_the_window():
    tokenizer = load_tokenizer(MINILM)
    long, short = _words(1, 2000), "A cat sat on the mat."
    counted = work.check_work(fb.Settings(model_type=MINILM), [short, long, short, long], str)
    assert counted.tokens == len(tokenizer(short)["input_ids"]) + tokenizer.model_max_length
    assert counted.weighed == counted.tokens and counted.notes == ()


def test_a_token_of_a_deeper_cut_costs_more(monkeypatch):
    text = _words(2, 40)
    monkeypatch.setattr(work, "WORK_BUDGET", 1.5 * work.check_work(fb.Settings(model_type=MINILM), [text], str).tokens)
    assert work.check_work(fb.Settings(model_type=MINILM, num_layers=4), [text], str).cost == pytest.approx(4 / 3)
    with pytest.raises(ValueError, match=r"^This request needs [\d,]+ tokens of work \(.*costs 2× the default model a"):
        work.check_work(fb.Settings(model_type=MINILM, num_layers=6), [text], str)


def test_a_layer_past_the_depth_is_refused_by_the_counting_before_any_weights_load(model_builds):
    with pytest.raises(space.SpaceError, match=rf"num_layers=7 is out of range for {MINILM} \(0\.\.6;"):
        space.on_model_thread(space.score_api)("a", "b", MINILM, "7")
    assert model_builds == []


def test_texts_the_tokenizer_cannot_read_are_named():
    texts = ["a cat sat", "\u200b\u200b", "😀 🚀", "a dog ran", "\u200b"]
    counted = work.check_work(fb.Settings(model_type=MINILM), texts, lambda i: f"row {i + 1}'s candidate")
    empty, unknown = counted.notes
    assert empty.startswith("2 texts (first: row 2's candidate) are empty after tokenizing")
    assert unknown.startswith("Row 3's candidate is mostly the unknown token [UNK]: ")
