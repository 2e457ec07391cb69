"""Rules of tests/test_docs_behaviour.py about figures and links: a figure quoted beside a results file is in that
file; a range of ratios covers every row of the series it is quoted from; a figure said beside a link is on the
linked page, and the page mentions what it is linked for; an outcome is given as a figure, not as "the same".
Each is a function from a page's text (and a reader of the repository's files) to findings, one sentence each."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable

import docs_code as code
import docs_text as md

Read = Callable[[str], "str | None"]  # a repository path -> its text, or None where there is no such file

#: A results file: what a benchmark wrote (benchmarks/*.md, *.json) or a meta-evaluation table in docs/.
RESULTS = re.compile(r"\b(?:benchmarks/[\w.-]+\.(?:md|json)|docs/metaeval[\w.-]*\.(?:md|csv))\b")
NUMBER = r"\d[\d,]*(?:\.\d+)?(?:e-?\d+)?"
#: A figure: a number with a decimal point, or with a unit of time, memory, speed or share.
FIGURE = re.compile(rf"(?<![\w.+/#=-])({NUMBER})(\s*(?:×|%|s\b|ms\b|MB\b|GB\b|KB\b|GFLOP/s))?")
RATIO_RANGE = re.compile(rf"(?<![\w.])({NUMBER})\s*[–-]\s*({NUMBER})\s*×")
SINGLE_RATIO = re.compile(rf"(?<![\w.–-])({NUMBER})\s*×")
#: An outcome said in words where a figure was measured ("the same p95", "RSS did not grow").
VAGUE = re.compile(
    r"\b(?:the same|unchanged) (?:\w+ ){0,2}(?:p50|p95|p99|latency|RSS|memory)\b"
    r"|\b(?:p50|p95|p99|latency|RSS|memory)\b[^.;,]{0,20}\b(?:did not (?:grow|change|rise)|unchanged|stayed the same)\b",
    re.IGNORECASE,
)
STOP = {"with", "from", "that", "this", "what", "where", "when", "which", "their", "there", "about", "each", "every"}


def _plain(text: str) -> str:
    """Text whose numbers are figures: no code spans, link targets, dates, versions or hex digests."""
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"\d{4}-\d\d-\d\d", " ", text)
    text = re.sub(r"\b\d+\.\d+\.\d+\b|\b[0-9a-f]{7,}\b", " ", text)
    return text


def _value(shown: str) -> float:
    return float(shown.replace(",", ""))


def _rounds_to(value: float, shown: str) -> bool:
    """Whether ``value`` written with the precision of ``shown`` reads ``shown`` (1.546 reads 1.55; 2.98e-7, 3e-7)."""
    mantissa = shown.split("e")[0]
    places = len(mantissa.split(".")[1]) if "." in mantissa else 0
    if "e" in shown:
        return value != 0 and float(f"{value:.{places}e}") == _value(shown)
    return round(value, places) == _value(shown)


def numbers(text: str) -> list[float]:
    """Every number of a results file (thousands separators dropped)."""
    return [_value(n) for n in re.findall(NUMBER, text)]


def figures(text: str) -> list[tuple[str, bool]]:
    """``(figure, is a percentage)`` for each figure of the text; a range's unit counts for both ends, and a bound
    (``≤ 1.8e-3``, ``≥ 0.996``) is not a figure."""
    plain = re.sub(rf"({NUMBER})(\s*[–-]\s*{NUMBER}\s*(%|×))", r"\1\3\2", _plain(text))
    return [
        (m[1], "%" in (m[2] or ""))
        for m in FIGURE.finditer(plain)
        if (m[2] or "." in m[1]) and not re.search(r"[≤≥<>]\s*$", plain[: m.start()])
    ]


def units(text: str) -> list[tuple[str, list[str], str]]:
    """``(unit, results files, context)``: each list item, table row and paragraph with the results files it
    quotes and the text that names them. A table quotes those of the paragraph before it, and so does the block
    right after a table; a unit that names files quotes those too."""
    out: list[tuple[str, list[str], str]] = []
    carried: tuple[list[str], str] = ([], "")
    previous_table = False
    for kind, _, block in md.segments(text):
        if kind != "prose":
            continue
        table = block.lstrip().startswith("|")
        own = RESULTS.findall(block)
        if block.lstrip().startswith("#") or not (table or previous_table):
            carried = ([], "")
        for item in re.split(r"\n(?=\s*(?:[-*] |\d+\. |\|))", block):
            mine = RESULTS.findall(item) or (own if not table else [])
            files = list(dict.fromkeys(mine + carried[0]))
            out.append((item, files, (item if mine else "") + "\n" + carried[1]))
        carried = (own, block) if own else carried
        previous_table = table
    return out


def _table_rows(results: str) -> list[dict[str, str]]:
    """The rows of every Markdown table of a results file, each a dict from its table's header to the cell."""
    rows: list[dict[str, str]] = []
    for table in re.findall(r"(?:^\|.*\|[ \t]*\n?)+", results, re.MULTILINE):
        lines = [ln for ln in table.strip().splitlines() if not re.match(r"^\|[-:| ]+\|$", ln)]
        head = [c.strip() for c in lines[0].strip("|").split("|")]
        rows += [dict(zip(head, (c.strip() for c in ln.strip("|").split("|")), strict=False)) for ln in lines[1:]]
    return rows


def range_findings(unit: str, results: str, name: str, context: str = "") -> list[str]:
    """A range ``a–b×`` quoted from a results file covers every row of the series it comes from: the rows of one
    contender (those of the unit's sizes, where the unit names a size the file's rows have) whose ratios
    include both ends."""
    rows = _table_rows(results)
    said = {_value(n) for n in re.findall(NUMBER, _plain(unit + " " + context))}
    found = []
    for low, high in RATIO_RANGE.findall(_plain(unit)):
        for contender in {r.get("contender", "") for r in rows} - {""}:
            series = [r for r in rows if r.get("contender") == contender]
            for size in ("pairs", "workload"):
                sized = [r for r in series if size in r and re.fullmatch(NUMBER, r[size]) and _value(r[size]) in said]
                series = sized or series
            ratios = [
                _value(v)
                for r in series
                for k, v in r.items()
                if ("×" in k or "speed-up" in k) and re.fullmatch(NUMBER, v)
            ]
            if any(_rounds_to(v, low) for v in ratios) and any(_rounds_to(v, high) for v in ratios):
                left = sorted(v for v in ratios if not _value(low) <= round(v, 2) <= _value(high))
                if left:
                    found.append(f"{low}–{high}× leaves out {contender}'s {', '.join(map(str, left))}× in {name}")
    return found


@functools.cache
def bounds() -> frozenset[float]:
    """The values of the package's named integer constants (``CACHE_MB = 16``): a bound the code holds, which a
    page may state beside a measurement."""
    found = set()
    for path in (code.REPO / "fastbertscore").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                if names and names[0].isupper() and isinstance(node.value.value, int):
                    found.add(float(node.value.value))
    return frozenset(found)


def _derived(shown: str, percent: bool, said: list[float], values: list[float]) -> bool:
    """Whether a figure is computed from the figures its sentence shows (a ratio, a share or a difference of two),
    or is a file's ratio as a percentage over 1 (1.479 padded per real token: "48% padding")."""
    shares = [100 * (v - 1) for v in values] if percent else []
    made = [a / b for a in said for b in said if b] + [a - b for a in said for b in said]
    made += [100 * (a / b - 1) for a in said for b in said if b] if percent else []
    made += [100 * a / b for a in said for b in said if b] if percent else []
    return _value(shown) in bounds() | {1.0} or any(_rounds_to(v, shown) for v in shares + made)


def figure_findings(text: str, read: Read) -> list[str]:
    """Every figure beside a results file is in that file (as printed, or rounded to the figure's precision) or
    computed from the figures shown beside it, and every range of ratios quoted from one covers its series."""
    found = []
    for unit, names, context in units(text):
        files = {n: t for n in dict.fromkeys(names) if (t := read(n)) is not None}
        if not files:
            continue
        values = [v for t in files.values() for v in numbers(t)]
        said = [_value(n) for n in re.findall(NUMBER, _plain(unit))]
        for shown, percent in figures(unit):
            quoted = any(_rounds_to(v, shown) or percent and _rounds_to(100 * v, shown) for v in values)
            if not quoted and not _derived(shown, percent, said, values):
                found.append(f"{shown}: not in {', '.join(files)} ({unit.strip()[:70]!r})")
        for name, results in files.items():
            found += range_findings(unit, results, name, context)
    return found


def _slug(heading: str) -> str:
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower()))


def _section(page: str, anchor: str) -> str | None:
    """The part of a page under the heading ``anchor`` names (to the next heading of its level or higher)."""
    heads = list(re.finditer(r"^(#+) (.+)$", page, re.MULTILINE))
    for i, head in enumerate(heads):
        if _slug(head[2]) == anchor:
            end = next((h.start() for h in heads[i + 1 :] if len(h[1]) <= len(head[1])), len(page))
            return page[head.start() : end]
    return None


def _mentions(target: str, label: str) -> list[str]:
    """The parts of a link's label the target does not mention: its code spans verbatim, else its words."""
    code = re.findall(r"`([^`]+)`", label)
    if code:
        return [c for c in code if c not in target]
    low = target.lower()
    words = [w for w in re.findall(r"[a-z][a-z0-9_-]{3,}", label.lower()) if w not in STOP]
    return [w for w in words if (w if "_" in w else w[:5]) not in low]  # an identifier verbatim, a word by its stem


def link_findings(text: str, page: str, read: Read) -> list[str]:
    """Every link to a page of the repository reaches a section that exists and mentions what the link is for (its
    label), and every ratio said beside links, not quoted from a results file there, is on one of the linked
    pages."""
    found = []
    folder = page.rsplit("/", 1)[0] if "/" in page else ""
    for unit, names, _ in units(text):
        linked = []
        for label, target in re.findall(r"\[([^\]]+)\]\(([^)\s]+)\)", unit):
            path, _, anchor = target.partition("#")
            if re.match(r"^\w+:", target) or path and not path.endswith(".md"):
                continue  # another site, a picture or a file: path_findings checks that a file exists
            where = _normalized(f"{folder}/{path}" if folder and path else path or page)
            body = read(where)
            if body is None:
                continue  # a missing file is path_findings' to report
            title = re.search(r"^# .+$", body, re.MULTILINE)
            if anchor:
                section = _section(body, anchor)
                if section is None:
                    found.append(f"[{label}]({target}): {where} has no heading '#{anchor}'")
                    continue
                body = section
            missing = _mentions(body + "\n" + (title[0] if title else ""), label)
            if missing:
                found.append(f"[{label}]({target}): {where} never mentions {', '.join(missing)}")
            linked.append(body)
        if linked and not names:
            found += _figures_on(unit, "\n".join(linked))
    return found


def _figures_on(unit: str, target: str) -> list[str]:
    """The ratios said beside links that no linked page states (a range as a range; each rounded)."""
    plain, there = _plain(unit), _plain(target)
    ranges, values = RATIO_RANGE.findall(there), numbers(there)
    found = []
    for low, high in RATIO_RANGE.findall(plain):
        if not any(_rounds_to(_value(a), low) and _rounds_to(_value(b), high) for a, b in ranges):
            found.append(f"{low}–{high}× is on no page it links ({unit.strip()[:60]!r})")
    for single in SINGLE_RATIO.findall(RATIO_RANGE.sub(" ", plain)):
        if not any(_rounds_to(v, single) for v in values):
            found.append(f"{single}× is on no page it links ({unit.strip()[:60]!r})")
    return found


def _normalized(path: str) -> str:
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            parts = parts[:-1]
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def vague_findings(text: str) -> list[str]:
    """A measured outcome is given as its figure: "the same p95" or "RSS did not grow" gives none."""
    return [
        f"{m[0]!r}: give the figure and its results file ({s[:70]!r})"
        for s in md.sentences(text)
        for m in VAGUE.finditer(s)
        if not RESULTS.search(s)
    ]
