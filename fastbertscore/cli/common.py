"""What every command shares (``bertscore`` and its commands, torchrun's and Ray's scripts): the settings' flags
(made from :class:`~fastbertscore.Settings`' fields, and settings from them), the one check of a command's files,
the embedded-model default, reading texts from files, strings or stdin, and one-line errors with exit codes (0 ok, 2
bad input or usage, 1 anything else)."""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import fields
from functools import lru_cache
from pathlib import Path
from typing import Any, NoReturn

from fastbertscore.baselines.table import BaselineError
from fastbertscore.files import read_json_lines, read_lines, split_lines
from fastbertscore.models.defaults import DEFAULT_MODEL
from fastbertscore.models.layer_registry import registry_path
from fastbertscore.outputs import refuse_overwriting_inputs, same_file
from fastbertscore.settings import Settings

# A lone word with an extension ("refs.txt", "data/hyp.en") is taken for a file name, so a typo in a path
# is reported instead of being scored as a one-word sentence.
_LOOKS_LIKE_PATH = re.compile(r"^\S*([/\\]\S+|\.[A-Za-z0-9]{1,6})$")


class InputError(ValueError):
    """Bad command-line input; reported in one line with exit code 2."""


def whole_number(least: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``least`` (``--pairs 0`` wrote a table of no pairs; ``--limit
    0`` read no row and said a column was missing)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} is below {least}: give {least} or more")
        return value

    return parse


class Parser(argparse.ArgumentParser):
    """Every command's parser: argparse's, with its own errors (an unknown flag, a missing value, a bad choice) in
    one line on stderr, exit 2, as every other error of the command line (argparse prints its usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists the flags)\n")  # already in flags


def add_arguments(parser: argparse.ArgumentParser, exclude: tuple[str, ...] = (), taken: tuple[str, ...] = ()) -> None:
    """The settings' flags on ``parser``: names, defaults, choices and help from :class:`Settings`.

    ``exclude`` leaves settings out; ``taken`` are option strings the command uses for itself (``-b``), dropped
    from the settings' spellings (``--batch_size`` stays).
    """
    for f in fields(Settings):
        flags = [flag for flag in f.metadata["flags"] if flag not in taken]
        if not flags or f.name in exclude:
            continue
        extra = dict(f.metadata["argparse"])
        if f.default is False:
            extra["action"] = "store_true"
        parser.add_argument(*flags, dest=f.name, default=f.default, help=flag_help(f.name), **extra)


#: What the commands add to an option's help: where their default differs from the library's.
COMMAND_DEFAULTS = {"model_type": "; without --lang, the embedded default model"}


def flag_help(name: str) -> str:
    """Option ``name``'s help (:meth:`~fastbertscore.Settings.help_of`, written once there) in the command line's
    words: other options named by their flags."""
    flags, _ = _keywords()
    text = re.sub(r"`(\w+)`", lambda found: flags.get(found[1], found[0]), Settings.help_of(name))
    return text + COMMAND_DEFAULTS.get(name, "")


def files_read(args: argparse.Namespace) -> dict[str, Path]:
    """The files the settings' flags make a run read, by how they were named: ``--baseline_path``, and the layer
    registry with ``--layer_registry``."""
    read: dict[str, Path] = {}
    if getattr(args, "baseline_path", None):
        read["--baseline_path"] = Path(args.baseline_path)
    if getattr(args, "layer_registry", False):
        read["--layer_registry's registry"] = registry_path()
    return read


def check_outputs(
    args: argparse.Namespace,
    outputs: Mapping[str, str | os.PathLike[str]],
    inputs: Mapping[str, str | os.PathLike[str] | None] | None = None,
    *,
    updates: Mapping[str, str | os.PathLike[str]] | None = None,
) -> None:
    """The one check of a command's files, which every command that writes calls before any model work: no output
    over one of ``inputs`` (None: not given), over a file the settings' flags read (:func:`files_read`) or over
    another output, and each output a file that can be written where it is named
    (:func:`~fastbertscore.outputs.refuse_overwriting_inputs`). ``updates`` are files the command reads and
    rewrites on purpose (``tune-layer --record``'s registry): outputs, except against themselves as read.

    Raises:
        ValueError: one line naming the output and what it would overwrite, or what is wrong with its path.
    """
    given = {name: path for name, path in (inputs or {}).items() if path is not None}
    read = {
        name: path
        for name, path in files_read(args).items()
        if not any(same_file(path, Path(updated)) for updated in (updates or {}).values())
    }
    refuse_overwriting_inputs({**outputs, **(updates or {})}, {**given, **read})


def from_arguments(args: argparse.Namespace, **overrides: Any) -> Settings:
    """Settings from a namespace filled by :func:`add_arguments` (fields without a flag keep their defaults)."""
    given = {name: getattr(args, name) for name in Settings.names() if hasattr(args, name)}
    return Settings(**{**given, **overrides})


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
    if os.path.isdir(value):
        raise InputError(f"{value} is a folder: give a file with one text per line")
    if _LOOKS_LIKE_PATH.match(value):
        raise InputError(f"file not found: {value} (quote a sentence with spaces to score it as text)")
    return None


class TypedFlag(argparse.Action):
    """Stores the value and, as ``<dest>_flag``, the spelling the user typed (``-f`` or ``--out``), so an error
    names the flag as the user wrote it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_flag", option_string)


def flag_of(args: argparse.Namespace, dest: str, default: str) -> str:
    """The spelling of ``dest``'s flag the user typed (``default`` when the value was not typed)."""
    return getattr(args, f"{dest}_flag", None) or default


def _is_file(value: str) -> bool:
    try:
        return Path(value).is_file()
    except OSError:  # a sentence longer than a file name may be (ENAMETOOLONG) is text, not a path
        return False


def _existing(path: Path, flag: str) -> Path:
    if not path.is_file():
        raise InputError(f"{flag} {path}: file not found")
    return path


def line_name(name: str, i: int) -> str:
    """How messages name line ``i`` (0-based) of file ``name`` ("-": standard input): ``refs.txt line 3``."""
    return f"{'standard input' if name == '-' else name} line {i + 1}"


def file_lines(path: Path, flag: str) -> list[str]:
    return read_lines(_existing(path, flag))


def json_lines(path: Path, flag: str) -> list[object]:
    return read_json_lines(_existing(path, flag))


def settings_from(args: argparse.Namespace, prog: str) -> Settings:
    """The run's settings; without --model or --lang, the embedded default model (said on stderr)."""
    if args.model_type is None and args.lang is None:
        print(f"{prog}: no --model or --lang given: using the embedded default model {DEFAULT_MODEL}", file=sys.stderr)
        return from_arguments(args, model_type=DEFAULT_MODEL)
    return from_arguments(args)


@lru_cache(maxsize=1)
def _keywords() -> tuple[dict[str, str], re.Pattern[str]]:
    """Each setting's Python keyword → its long flag, and a pattern of ``keyword=`` with what may follow it, or of a
    keyword that a check names (``batch_size must be ...``)."""
    flags = {
        f.name: next(x for x in f.metadata["flags"] if x.startswith("--"))
        for f in fields(Settings)
        if f.metadata["flags"]
    }
    names = "|".join(sorted(flags, key=len, reverse=True))
    value = r"'[^']*'|\"[^\"]*\"|True\b|False\b|None\b|-?[\d.]*\d"
    return flags, re.compile(rf"(?<![\w-])({names})(?:=({value})?|(?= must be\b))")


def in_flags(message: str) -> str:
    """A library message in the command line's words: ``long_inputs='window'`` → ``--long_inputs window``,
    ``lang=`` → ``--lang``, ``rescale_with_baseline=True`` → ``--rescale_with_baseline``, ``batch_size must be`` →
    ``--batch_size must be``. The library speaks Python to Python callers; every CLI error and log line passes
    through here, the one place that translates."""
    flags, pattern = _keywords()

    def flag(match: re.Match[str]) -> str:
        name, value = flags[match[1]], match[2]
        if value is None or value == "True":
            return name
        if value == "False":
            return f"no {name}"
        if value[0] in "'\"":
            inner = value[1:-1]
            value = inner if re.fullmatch(r"[\w./:@+~-]+", inner) else f"'{inner}'"
        return f"{name} {value}"

    return pattern.sub(flag, message)


class _FlagsFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return in_flags(super().format(record))


def guarded(prog: str, run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``run(args)`` with log lines and errors in the CLI's words, each error in one line (exit 2, or 1 when
    unexpected)."""
    handler = logging.StreamHandler()
    handler.setFormatter(_FlagsFormatter(f"{prog}: %(message)s"))
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, handlers=[handler])
    # huggingface_hub writes its log to stderr with a handler of its own (transformers too, without propagating):
    # through ours as well, each of its lines showed twice.
    logging.getLogger("huggingface_hub").propagate = False
    try:
        return run(args)
    except (InputError, BaselineError, ValueError, TypeError) as error:
        print(f"{prog}: error: {in_flags(str(error))}", file=sys.stderr)
        return 2
    except Exception as error:  # noqa: BLE001 - one line, not a stack trace, for anything unexpected
        print(f"{prog}: error: {type(error).__name__}: {in_flags(str(error))}", file=sys.stderr)
        return 1
