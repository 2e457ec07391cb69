"""What every ``bertscore`` command shares: the settings' flags, the embedded-model default, reading texts from
files, strings or stdin, and one-line errors with exit codes (0 ok, 2 bad input or usage, 1 anything else)."""

from __future__ import annotations

import argparse
import logging
import re
import sys
from pathlib import Path

from fastbertscore.baselines.table import BaselineError
from fastbertscore.files import read_json_lines, read_lines, split_lines
from fastbertscore.pipeline.defaults import DEFAULT_MODEL
from fastbertscore.settings import Settings, add_arguments, from_arguments

# A lone word with an extension ("refs.txt", "data/hyp.en") is taken for a file name, so a typo in a path
# is reported instead of being scored as a one-word sentence.
_LOOKS_LIKE_PATH = re.compile(r"^\S*([/\\]\S+|\.[A-Za-z0-9]{1,6})$")


class InputError(ValueError):
    """Bad command-line input; reported in one line with exit code 2."""


def add_common(parser: argparse.ArgumentParser, taken: tuple[str, ...] = ()) -> None:
    """The settings' flags (names, defaults, choices and help from :class:`~fastbertscore.Settings`) and -v."""
    add_arguments(parser, taken=taken)
    parser.add_argument("-v", "--verbose", action="store_true", help="progress bars and details")


def stdin_lines() -> list[str]:
    """The stripped lines of standard input, cut as a file's are (:func:`fastbertscore.files.split_lines`)."""
    stream = getattr(sys.stdin, "buffer", None)
    try:
        text = stream.read().decode("utf-8") if stream is not None else sys.stdin.read()
    except UnicodeDecodeError as error:
        raise InputError(f"cannot read standard input: {error}") from None
    return [line.strip() for line in split_lines(text)]


def read_texts(value: str, stdin_text: list[str] | None) -> list[str] | None:
    """Lines of a file (or stdin for '-'), or None when ``value`` is a literal string."""
    if value == "-":
        return stdin_text
    if _is_file(value):
        return read_lines(value)
    if _LOOKS_LIKE_PATH.match(value):
        raise InputError(f"file not found: {value} (quote a sentence with spaces to score it as text)")
    return None


def _is_file(value: str) -> bool:
    try:
        return Path(value).is_file()
    except OSError:  # a sentence longer than a file name may be (ENAMETOOLONG) is text, not a path
        return False


def _existing(path: Path, flag: str) -> Path:
    if not path.is_file():
        raise InputError(f"{flag} {path}: file not found")
    return path


def file_lines(path: Path, flag: str) -> list[str]:
    return read_lines(_existing(path, flag))


def json_lines(path: Path, flag: str) -> list:
    return read_json_lines(_existing(path, flag))


def settings_from(args, prog: str) -> Settings:
    """The run's settings; without --model or --lang, the embedded default model (said on stderr)."""
    if args.model_type is None and args.lang is None:
        print(f"{prog}: no --model or --lang given: using the embedded default model {DEFAULT_MODEL}", file=sys.stderr)
        return from_arguments(args, model_type=DEFAULT_MODEL)
    return from_arguments(args)


def guarded(prog: str, run, args) -> int:
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format=f"{prog}: %(message)s")
    try:
        return run(args)
    except (InputError, BaselineError, ValueError, TypeError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # noqa: BLE001 - one line, not a stack trace, for anything unexpected
        print(f"{prog}: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
