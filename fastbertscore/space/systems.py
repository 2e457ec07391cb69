"""Texts pasted into the Space's boxes: references one per line, systems as blocks opened by ``=== name``.

Blank lines are separators, never texts: a block may be followed by blank lines before the next ``=== name``,
and a trailing newline adds nothing. An empty text (an output the system left empty) is written as a line
holding only ``""`` (:data:`EMPTY_LINE`).
"""

from __future__ import annotations

from fastbertscore.files import split_lines
from fastbertscore.space.limits import MAX_CHARS, MAX_PAIRS, MAX_ROWS, MAX_SYSTEMS, check_pairs

#: How an empty output (or reference) is written in a pasted box.
EMPTY_LINE = '""'
_HEADER = "==="


def _text(line: str) -> str:
    return "" if line.strip() == EMPTY_LINE else line


def parse_lines(text: str | None) -> list[str]:
    """The texts of a box holding one per line: blank lines skipped, ``""`` an empty text."""
    return [_text(line) for line in split_lines(text or "") if line.strip()]


def parse_systems(text: str | None) -> dict[str, list[str]]:
    """Systems pasted as blocks, each opened by a line ``=== name`` (an unnamed block is ``system K``).

    Raises:
        ValueError: text before the first ``=== name`` line, or two blocks with the same name.

    Example:
        >>> parse_systems('=== A\\nfirst\\n""\\n\\n=== B\\none\\ntwo\\n')
        {'A': ['first', ''], 'B': ['one', 'two']}
    """
    systems: dict[str, list[str]] = {}
    current = None
    for number, line in enumerate(split_lines(text or ""), start=1):
        if line.startswith(_HEADER):
            current = line[len(_HEADER) :].strip() or f"system {len(systems) + 1}"
            if current in systems:
                raise ValueError(f"two pasted systems are named {current!r} (line {number}): give each its own name")
            systems[current] = []
        elif not line.strip():
            continue
        elif current is None:
            raise ValueError(f"line {number} comes before the first '=== name' line: pasted systems start with one")
        else:
            systems[current].append(_text(line))
    return systems


def check_systems(
    systems: dict[str, list[str]],
    refs: list[str],
    *,
    max_systems: int = MAX_SYSTEMS,
    max_segments: int = MAX_ROWS,
    max_chars: int = MAX_CHARS,
    max_pairs: int = MAX_PAIRS,
) -> None:
    """Refuse what the Space will not compare, with a message naming the system and the limit.

    Raises:
        ValueError: no references, too few or too many systems, too many segments or pairs (segments × systems),
            a system of another length than the references, or a text over ``max_chars``.
    """
    if not any(r.strip() for r in refs):
        raise ValueError("upload a references file or paste the references, one per line")
    if not 2 <= len(systems) <= max_systems:
        raise ValueError(f"give 2 to {max_systems} systems (files or pasted); got {len(systems)}")
    if len(refs) > max_segments:
        raise ValueError(f"the references have {len(refs)} lines; the Space compares at most {max_segments} segments")
    check_pairs(len(refs) * len(systems), f"{len(systems)} systems of {len(refs):,} segments", max_pairs)
    for name, lines in systems.items():
        if len(lines) != len(refs):
            raise ValueError(
                f"system {name} has {len(lines)} lines but the references have {len(refs)}; blank lines "
                f"between pasted systems are skipped, write an empty output as {EMPTY_LINE}"
            )
        longest = max([*lines, *refs], key=len)
        if len(longest) > max_chars:
            raise ValueError(f"a text of {name} or the references has {len(longest)} characters; at most {max_chars}")


def gather_systems(files: list[tuple[str, list[str]]], pasted: str | None) -> dict[str, list[str]]:
    """Uploaded systems (``(file name, lines)``, in order) and then the pasted ones, by name.

    Raises:
        ValueError: two systems of the same name, or a bad paste (:func:`parse_systems`).
    """
    systems: dict[str, list[str]] = {}
    for name, lines in files:
        if name in systems:
            raise ValueError(f"two system files are named {name}")
        systems[name] = lines
    for name, lines in parse_systems(pasted).items():
        if name in systems:
            raise ValueError(f"a file and a pasted system are both named {name}")
        systems[name] = lines
    return systems
