"""Reading a Markdown page as tests/test_docs_claims.py's rules need it: its code blocks, prose, sentences, inline
code spans, links and shell commands, each in the page's order. Plain text in, plain values out; nothing here
knows what a rule checks."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
SHELLS = ("bash", "sh", "console", "shell")
#: Words that start a command of this project (or of the tools its install lines use).
PROGRAMS = ("bertscore", "bertscore-show", "bertscore-baseline", "python", "python3", "torchrun", "pip", "pip3", "bash")


@dataclass(frozen=True)
class Command:
    """One command line: what runs, the comment at its end, and the comment lines just above it (in a block)."""

    line: str
    comment: str = ""
    above: str = ""


def segments(text: str) -> list[tuple[str, str, str]]:
    """``(kind, language, text)`` in page order: ``("code", lang, code)`` for fenced blocks, ``("prose", "", block)``
    for each run of lines between blank lines (a table is one block)."""
    out: list[tuple[str, str, str]] = []
    end = 0
    for m in FENCE.finditer(text):
        out += [("prose", "", b) for b in re.split(r"\n\s*\n", text[end : m.start()]) if b.strip()]
        out.append(("code", m[1], m[2]))
        end = m.end()
    return out + [("prose", "", b) for b in re.split(r"\n\s*\n", text[end:]) if b.strip()]


def prose(text: str) -> str:
    """The page without its fenced blocks (each replaced by as many empty lines)."""
    return FENCE.sub(lambda m: "\n" * m[0].count("\n"), text)


def sentences(text: str) -> list[str]:
    """The sentences of the page's prose, each on one line (a list item or table row ends one too)."""
    out = []
    for block in re.split(r"\n\s*\n", prose(text)):
        for item in re.split(r"\n(?=\s*(?:[-*] |\d+\. |\|))", block):
            joined = " ".join(line.strip() for line in item.splitlines())
            out += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`(\[*\"])", joined) if s]
    return out


def spans(text: str) -> list[str]:
    """The inline code spans of the page's prose."""
    return SPAN.findall(prose(text))


def links(text: str) -> list[str]:
    """Link targets of the page's prose (``[text](target)``)."""
    return LINK.findall(prose(text))


def _comment_at(line: str) -> int:
    """Where a shell comment starts in ``line`` (a ``#`` outside quotes, at the start or after a space), or -1."""
    quote = ""
    for i, c in enumerate(line):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return i
    return -1


def block_commands(code: str) -> list[Command]:
    """The commands of a shell block: continuations joined, each with its trailing comment and the comment lines
    above it."""
    out: list[Command] = []
    above: list[str] = []
    pending = ""
    for raw in code.splitlines():
        line = (pending + " " + raw.strip()) if pending else raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1].strip()
            continue
        if not line:
            continue
        at = _comment_at(line)
        if at == 0:
            above.append(line[1:].strip())
            continue
        command, comment = (line, "") if at < 0 else (line[:at].strip(), line[at + 1 :].strip())
        out.append(Command(command, comment, " ".join(above)))
        above = []
    return out


def commands(text: str) -> list[Command]:
    """Every command the page shows: the lines of its shell blocks, and inline code spans that start with a program."""
    out = [c for kind, lang, code in segments(text) if kind == "code" and lang in SHELLS for c in block_commands(code)]
    return out + [Command(s) for s in spans(text) if s.split(" ", 1)[0] in PROGRAMS]


def simple_commands(line: str) -> list[list[str]]:
    """The words of each simple command of a line (split at ``&&``, ``||``, ``|`` and ``;``), leading variable
    assignments left out; [] where the line is not valid shell."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return []
    out: list[list[str]] = [[]]
    for word in words:
        if word in ("&&", "||", "|", ";"):
            out.append([])
        elif out[-1] or not re.match(r"^[A-Za-z_]\w*=", word):
            out[-1].append(word)
    return [c for c in out if c]


def flags(words: list[str]) -> list[str]:
    """The option flags among a command's arguments (``--name`` or ``-x``; ``--name=value`` as ``--name``), up to a
    ``--`` that ends them."""
    out = []
    for word in words:
        if word == "--":
            break
        m = re.match(r"^(--[A-Za-z][\w-]*)(?:=.*)?$|^(-[A-Za-z])$", word)
        if m:
            out.append(m[1] or m[2])
    return out


def front_matter(text: str) -> dict[str, str]:
    """The ``key: value`` lines of a page's front matter (``---`` lines around it at the top)."""
    m = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    return dict(re.findall(r"^(\w+): *(.*)$", m[1], re.MULTILINE)) if m else {}


def body(text: str) -> str:
    """The page after its front matter."""
    m = re.match(r"---\n.*?\n---\n", text, re.DOTALL)
    return text[m.end() :] if m else text
