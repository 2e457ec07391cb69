"""Plan a score call before anything is embedded: which pairs are matched together, and when each distinct text
is embedded, kept for a later step and let go.

The plan is a pure function of the pairs (as indices of distinct texts) and of each text's size, so a test can
inspect it without a model. Pairs that share a text form one group (a reference and every candidate scored
against it; a candidate and its several references; a text several systems output), and a group goes whole into
one step whenever it fits the step's capacity, so that each distinct text is embedded once whatever the order
of the input. A group too large for one step is split over consecutive steps, its pairs ordered by reference,
then candidate; the texts a later step still needs are kept (in memory, or on disk past the budget) rather than
embedded again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """One step of a call: embed ``embed``, match the pairs ``rows``, keep ``keep``, then let ``release`` go."""

    rows: tuple[int, ...]  # pair rows matched in this step
    texts: tuple[int, ...]  # the distinct texts those pairs use
    embed: tuple[int, ...]  # of ``texts``, those first needed here: embedded in this step
    keep: tuple[int, ...]  # of ``texts``, those a later step needs: kept after this step
    release: tuple[int, ...]  # texts kept from an earlier step that no later step needs: let go after this step


@dataclass(frozen=True)
class Schedule:
    """The steps of a call, in order."""

    steps: tuple[Step, ...]

    @property
    def embedded(self) -> list[int]:
        """Every text the schedule embeds, in order; each distinct text appears once."""
        return [u for step in self.steps for u in step.embed]

    def most_kept(self, size: Sequence[int]) -> int:
        """The largest total ``size`` of texts kept between two steps."""
        kept: set[int] = set()
        most = 0
        for step in self.steps:
            kept.update(step.keep)
            kept.difference_update(step.release)
            most = max(most, sum(size[u] for u in kept))
        return most


def plan(cand: Sequence[int], ref: Sequence[int], rows: Sequence[int], size: Sequence[int], capacity: int) -> Schedule:
    """A schedule for the pairs ``rows`` (pair ``i`` is text ``cand[i]`` against text ``ref[i]``).

    ``size[u]`` is what text ``u``'s embedding costs (tokens or bytes) and ``capacity`` what one step's texts may
    cost together. A single pair larger than ``capacity`` still gets a step of its own; the caller decides whether
    that is an error. Steps hold whole groups of pairs that share texts when the group fits; groups come in the
    order of their first pair in the input.
    """
    steps_rows: list[list[int]] = []
    current: list[int] = []
    current_texts: set[int] = set()
    current_size = 0
    for group in _groups(cand, ref, rows):
        texts = {u for row in group for u in (cand[row], ref[row])}
        group_size = sum(size[u] for u in texts)
        if current and current_size + group_size > capacity:
            steps_rows.append(current)
            current, current_texts, current_size = [], set(), 0
        if group_size <= capacity:
            current.extend(group)
            current_texts |= texts
            current_size += group_size
            continue
        for row in sorted(group, key=lambda r: (ref[r], cand[r])):  # too large for one step: split it
            new = {cand[row], ref[row]} - current_texts
            extra = sum(size[u] for u in new)
            if current and current_size + extra > capacity:
                steps_rows.append(current)
                current, current_texts, current_size = [], set(), 0
                new = {cand[row], ref[row]}
                extra = sum(size[u] for u in new)
            current.append(row)
            current_texts |= new
            current_size += extra
    if current:
        steps_rows.append(current)
    return _schedule(cand, ref, steps_rows)


def _groups(cand: Sequence[int], ref: Sequence[int], rows: Sequence[int]) -> list[list[int]]:
    """The rows joined by shared texts (connected components, by union-find), in the order of their first row."""
    parent: dict[int, int] = {}

    def root(u: int) -> int:
        parent.setdefault(u, u)
        while parent[u] != u:
            parent[u] = parent[parent[u]]
            u = parent[u]
        return u

    for row in rows:
        a, b = root(cand[row]), root(ref[row])
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for row in rows:
        groups.setdefault(root(cand[row]), []).append(row)
    return list(groups.values())


def _schedule(cand: Sequence[int], ref: Sequence[int], steps_rows: list[list[int]]) -> Schedule:
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    step_texts = []
    for k, rows in enumerate(steps_rows):
        texts = tuple(dict.fromkeys(u for row in rows for u in (cand[row], ref[row])))
        step_texts.append(texts)
        for u in texts:
            first.setdefault(u, k)
            last[u] = k
    released: dict[int, list[int]] = {}
    for u, k in last.items():
        if first[u] != k:
            released.setdefault(k, []).append(u)
    steps = tuple(
        Step(
            rows=tuple(rows),
            texts=texts,
            embed=tuple(u for u in texts if first[u] == k),
            keep=tuple(u for u in texts if last[u] > k),
            release=tuple(released.get(k, ())),
        )
        for k, (rows, texts) in enumerate(zip(steps_rows, step_texts, strict=True))
    )
    return Schedule(steps)
