"""The one thread every request's model work runs on, and the one-line message a failure shows the user.

Gradio hands requests to up to 40 worker threads; when each of them ran the encoder, each got its own malloc
arena and OpenMP team, and the Space's memory kept growing. So every handler runs here, on one thread, and
whatever it raises reaches the page as a :class:`SpaceError`: one line, never a stack trace.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

_MODEL_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastbertscore-model")
Result = TypeVar("Result")


class SpaceError(Exception):
    """A failed request as its user reads it: one line that says what went wrong."""


# An absolute path of two or more parts (not a URL's, not a Hub id's "org/name"): a server's folder, never shown.
_SERVER_PATH = re.compile(r"(?<![\w.~:/-])(?:/[^\s'\"/:,;()]+)+/([^\s'\"/:,;()]+)")


def hide_paths(text: str) -> str:
    """``text`` with every absolute path shortened to its last part: a user reads the file's name, never where
    the server keeps it.

    Example:
        >>> hide_paths("cannot read '/tmp/gradio/0a1b/refs.txt' (see https://huggingface.co/roberta-large)")
        "cannot read 'refs.txt' (see https://huggingface.co/roberta-large)"
    """
    return _SERVER_PATH.sub(r"\1", text)


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message (its type's name when it has none), with no server path
    (:func:`hide_paths`), capitalised where it starts with a word (never ``Dtype='float16'``).

    Example:
        >>> first_line(ValueError("the reference is empty\\nmore detail"))
        'The reference is empty'
        >>> first_line(ValueError("dtype='float16' is not supported"))
        "dtype='float16' is not supported"
    """
    text = hide_paths((str(error).strip() or type(error).__name__).splitlines()[0])
    first = text.split(" ", 1)[0]
    return text[:1].upper() + text[1:] if first.isalpha() else text


def user_errors(function: Callable[..., Result], name: str | None = None) -> Callable[..., Result]:
    """``function``, any failure of it one :class:`SpaceError` (bad input: the check's own message; anything else
    still names what failed, ``name`` or the function's, instead of a bare "Error" badge)."""
    name = name or getattr(function, "__name__", "the request")

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Result:
        try:
            return function(*args, **kwargs)
        except SpaceError as error:
            raise SpaceError(hide_paths(str(error))) from None
        except (ValueError, TypeError) as error:
            raise SpaceError(first_line(error)) from None
        except Exception as error:
            logger.exception("%s failed", name)
            raise SpaceError(f"{name} failed: {type(error).__name__}: {first_line(error)}") from None

    return run


def on_model_thread(function: Callable[..., Result], name: str | None = None) -> Callable[..., Result]:
    """``function`` run on the model thread, any failure one :class:`SpaceError` (:func:`user_errors`)."""

    def submit(*args: Any, **kwargs: Any) -> Result:
        return _MODEL_THREAD.submit(function, *args, **kwargs).result()

    return user_errors(functools.wraps(function)(submit), name)
