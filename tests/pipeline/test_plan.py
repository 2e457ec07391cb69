"""The schedule of a score call, inspected without a model: each distinct text embedded once, every pair matched
once, steps within their capacity, and what is kept between steps exactly what later steps need."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fastbertscore.pipeline.plan import plan


def check_schedule(cand, ref, rows, size, capacity):
    schedule = plan(cand, ref, rows, size, capacity)
    matched = [row for step in schedule.steps for row in step.rows]
    assert sorted(matched) == sorted(rows)  # every pair once
    live = {u for row in rows for u in (cand[row], ref[row])}
    assert sorted(schedule.embedded) == sorted(live)  # every distinct text once
    kept: set[int] = set()
    for step in schedule.steps:
        assert set(step.texts) == {u for row in step.rows for u in (cand[row], ref[row])}
        assert set(step.embed) | kept >= set(step.texts)  # each text is new here or kept from before
        assert not set(step.embed) & kept
        if len(step.rows) > 1:
            assert sum(size[u] for u in step.texts) <= capacity
        kept |= set(step.keep)
        assert set(step.release) <= kept
        kept -= set(step.release)
    assert not kept  # nothing is kept past the last step that needs it
    return schedule


pair_lists = st.integers(1, 40).flatmap(
    lambda n_texts: st.tuples(
        st.lists(st.tuples(st.integers(0, n_texts - 1), st.integers(0, n_texts - 1)), min_size=1, max_size=80),
        st.lists(st.integers(1, 30), min_size=n_texts, max_size=n_texts),
        st.integers(1, 200),
    )
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(pair_lists)
def test_any_pairs_any_sizes_any_capacity(case):
    pairs, size, capacity = case
    cand, ref = [c for c, _ in pairs], [r for _, r in pairs]
    check_schedule(cand, ref, list(range(len(pairs))), size, capacity)


def systems_after_one_another(n_systems, n_segments):
    """System after system against the same references: text ids as engine._Texts assigns them."""
    cand = [s * n_segments + i for s in range(n_systems) for i in range(n_segments)]
    ref = [n_systems * n_segments + i for _ in range(n_systems) for i in range(n_segments)]
    return cand, ref


def test_a_reference_and_its_candidates_share_a_step_whatever_the_order():
    cand, ref = systems_after_one_another(n_systems=10, n_segments=50)
    size = [3] * (11 * 50)
    schedule = check_schedule(cand, ref, list(range(500)), size, capacity=3 * 11 * 5 + 10)  # 5 segments a step
    assert len(schedule.steps) == 10
    assert all(not step.keep for step in schedule.steps)  # nothing outlives its step: no memory, no disk
    shuffled = list(range(500))[::7] + [row for row in range(500) if row % 7]
    assert check_schedule(cand, ref, shuffled, size, 3 * 11 * 5 + 10).most_kept(size) == 0


def test_a_group_larger_than_a_step_keeps_only_the_texts_it_shares():
    # one candidate scored against 100 references (an MBR-like fan-out): the candidate is kept, not re-embedded
    cand, ref = [0] * 100, list(range(1, 101))
    schedule = check_schedule(cand, ref, list(range(100)), [5] * 101, capacity=50)
    assert len(schedule.steps) > 5
    assert schedule.steps[0].keep == (0,) and schedule.steps[-1].release == (0,)
    assert schedule.most_kept([5] * 101) == 5


def test_empty_and_single_pairs():
    assert plan([], [], [], [], 10).steps == ()
    schedule = check_schedule([0], [1], [0], [50, 60], capacity=10)  # larger than a step: a step of its own
    assert [step.rows for step in schedule.steps] == [(0,)]
