"""Input checks shared by ``score``, ``BERTScorer`` and the adapters.

Everything here runs before a model is touched, so bad input never reaches transformers and never
costs a model load.
"""

from __future__ import annotations

import logging
import os
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from fastbertscore.hardware import DTYPE_CHOICES

logger = logging.getLogger(__name__)

#: Texts as the caller gives them: a list (any sequence) of strings.
Texts = Sequence[str]
#: References (``refs``) as a scorer takes them: one string per candidate, or one list of strings per candidate.
Refs = Texts | Sequence[Texts]


@dataclass(frozen=True)
class Pairs:
    """Candidates and references flattened into one (candidate, reference) pair per row. ``groups[i]`` is the slice
    of rows of input candidate ``i`` (each of length one with single references); ``names(side, i, k)``, where given,
    names its text on ``side`` (``k``: which of its references) as the caller wrote it (``systems['B'][2]``)."""

    cands: list[str]
    refs: list[str]
    groups: list[tuple[int, int]]
    multi_ref: bool
    names: Callable[[str, int, int | None], str] | None = None

    def label(self, side: str, row: int) -> str:
        """Name pair ``row``'s text as the caller wrote it: ``cands[3]``, ``refs[3]`` or ``refs[3][1]``."""
        owner = bisect_right(self.groups, (row, float("inf"))) - 1
        k = row - self.groups[owner][0] if side == "refs" and self.multi_ref else None
        if self.names is not None:
            return self.names(side, owner, k)
        return f"{side}[{owner}]" if k is None else f"{side}[{owner}][{k}]"


def check_list(value: object, name: str, of: str = "strings") -> list[object]:  # any iterable but str or a mapping
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):  # a dict's keys: not texts
        raise TypeError(f"{name} must be a list of {of}, got {type(value).__name__}")
    return list(value)


def check_flag(value: object, name: str) -> bool:
    """``value`` where it is True or False, else a ``TypeError`` naming ``name`` (1 or "no" would read as a flag)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def check_texts(texts: object, name: str) -> list[str]:
    """Return ``texts`` as a list of str, or raise naming the first bad item."""
    items = check_list(texts, name)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{i}] is {_describe(item)}; expected a string")
    return cast("list[str]", items)  # every item was checked just above


def check_pairs(cands: object, refs: object, names: tuple[str, str] = ("cands", "refs")) -> Pairs:
    """Validate candidates and (possibly multiple) references and flatten them into pairs.

    ``refs`` is either a list of strings (one reference per candidate) or a list of lists of strings
    (several references per candidate; the counts may differ between candidates). ``names`` are the
    caller's names of the two arguments, used in messages.

    Raises:
        TypeError: an argument or an item has the wrong type (the message names its index).
        ValueError: empty input, different lengths, or a candidate with an empty list of references.
    """
    c_name, r_name = names
    cand_list = check_texts(cands, c_name)
    ref_list = check_list(refs, r_name)
    if not cand_list:
        raise ValueError(f"{c_name} is empty: give at least one candidate")
    if len(cand_list) != len(ref_list):
        raise ValueError(
            f"{c_name} and {r_name} differ in length ({len(cand_list)} candidates, {len(ref_list)} references); "
            "give one reference (or one list of references) per candidate"
        )
    multi_ref = not isinstance(ref_list[0], str)
    if not multi_ref:
        return Pairs(cand_list, check_texts(ref_list, r_name), [(i, i + 1) for i in range(len(ref_list))], False)

    flat_cands: list[str] = []
    flat_refs: list[str] = []
    groups: list[tuple[int, int]] = []
    for i, (cand, group) in enumerate(zip(cand_list, ref_list, strict=True)):
        if isinstance(group, str):
            raise TypeError(
                f"{r_name}[{i}] is a string but {r_name}[0] is a list; give every candidate a list of references"
            )
        texts = check_texts(group, f"{r_name}[{i}]")
        if not texts:
            raise ValueError(f"{r_name}[{i}] is an empty list; every candidate needs at least one reference")
        groups.append((len(flat_refs), len(flat_refs) + len(texts)))
        flat_cands.extend([cand] * len(texts))
        flat_refs.extend(texts)
    return Pairs(flat_cands, flat_refs, groups, True)


def check_positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def check_num_layers(num_layers: object, depth: int, model: str) -> int:
    if isinstance(num_layers, bool) or not isinstance(num_layers, int):
        raise TypeError(f"num_layers must be a whole number (0..{depth} for {model}), got {_describe(num_layers)}")
    if not 0 <= num_layers <= depth:
        raise ValueError(
            f"num_layers={num_layers!r} is out of range for {model} (0..{depth}; 0 is the embedding layer)"
        )
    return num_layers


LONG_INPUTS = ("truncate", "window", "error")
#: What happens to a text longer than the model's window: one of :data:`LONG_INPUTS`.
LongInputs = Literal["truncate", "window", "error"]


def check_options(
    *,
    model_type: object,
    lang: object,
    rescale_with_baseline: object,
    baseline_path: object,
    dtype: object,
    long_inputs: object,
    window_stride: object,
    cache_mb: object,
    device: object,
    cache_dir: object = None,
) -> None:
    """The scorer's settings, checked together before any model is loaded."""
    for name, value, hint in (("model_type", model_type, " (a folder too: str(path))"), ("lang", lang, "")):
        if value is not None and not isinstance(value, str):  # an int went deep into transformers' loading
            raise TypeError(f"{name} must be a string{hint}, got {_describe(value)}")
    if model_type is None and lang is None:
        raise ValueError(
            "give model_type= or lang=; for example model_type='sentence-transformers/all-MiniLM-L6-v2' "
            "(embedded, works offline) or lang='en' (roberta-large)"
        )
    if rescale_with_baseline and lang is None and baseline_path is None:
        raise ValueError("rescale_with_baseline=True needs lang= (baselines are per language) or baseline_path=")
    if dtype not in DTYPE_CHOICES:
        raise ValueError(f"dtype={dtype!r} is not one of {', '.join(DTYPE_CHOICES)}")
    if dtype == "float16" and not str(device).startswith("cuda"):
        raise ValueError("dtype='float16' needs a CUDA device; on CPU use dtype='bfloat16'")
    if long_inputs not in LONG_INPUTS:
        raise ValueError(f"long_inputs={long_inputs!r} is not one of {', '.join(LONG_INPUTS)}")
    if window_stride is not None and long_inputs != "window":
        raise ValueError(
            f"window_stride={window_stride!r} applies only with long_inputs='window' (got long_inputs={long_inputs!r})"
        )
    for name, value in (("window_stride", window_stride), ("cache_mb", cache_mb)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if cache_dir is not None:
        if not isinstance(cache_dir, (str, os.PathLike)):
            raise TypeError(f"cache_dir must be a folder path (str or os.PathLike), got {_describe(cache_dir)}")
        if not str(cache_dir):
            raise ValueError("cache_dir is empty: give a folder path, or leave it out for no disk cache")
        if "\0" in str(cache_dir):  # no file system takes it; os.path.exists() says False, mkdir raises
            raise ValueError(f"cache_dir={str(cache_dir)!r} holds a NUL character, which no path may")
        folder = os.path.expanduser(cache_dir)  # ~ is home, as the cache takes it
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise ValueError(f"cache_dir={str(cache_dir)!r} exists and is not a folder")


_HUB_ID = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")


def check_hub_model_id(model: object) -> str:
    """A Hub model id (``name`` or ``org/name``), never a path: for services that must not open local folders."""
    if not isinstance(model, str) or not _HUB_ID.match(model) or ".." in model or os.path.exists(model):
        raise ValueError(
            f"model {model!r} is not a Hugging Face Hub model id such as 'roberta-large' or "
            "'sentence-transformers/all-MiniLM-L6-v2' (paths and local folders are not accepted here)"
        )
    return model


def _describe(item: object) -> str:
    return "None" if item is None else f"a {type(item).__name__} ({item!r:.40})"


def check_idf_sents(sents: object, idf: object = True) -> list[str]:
    """``idf_sents``: a non-empty list of strings, beside ``idf=True`` (a warning beside ``idf=False``, where they
    weigh nothing; an error beside an idf mapping)."""
    if isinstance(idf, Mapping):
        raise ValueError(  # noqa: TRY004 - two options in conflict, not a value of the wrong type
            "idf={token_id: weight} and idf_sents= both say where idf weights come from; give one: the mapping, or "
            "idf=True with idf_sents= to count them over those sentences"
        )
    texts = check_texts(sents, "idf_sents")
    if not texts:
        raise ValueError("idf_sents is empty: give the reference sentences to count document frequencies over")
    if idf is not True:
        logger.warning("idf_sents= is given without idf=True, so it weighs nothing: pass idf=True to count idf over it")
    return texts


def check_groups(groups: object, name: str) -> list[list[str]]:
    """A list of non-empty lists of strings (one group per input), checked; errors name the group."""
    out = []
    for g, group in enumerate(check_list(groups, name, "lists of strings (one list per input)")):
        out.append(check_texts(group, f"{name}[{g}]"))
        if not out[-1]:
            raise ValueError(f"{name}[{g}] is an empty list; every group needs at least one text")
    if not out:
        raise ValueError(f"{name} is empty: give at least one group")
    return out


@dataclass(frozen=True)
class Matrix:
    """``pairwise``'s checked texts: every text of ``a`` (candidates) against every text of ``b`` (references)."""

    a: list[str]
    b: list[str]

    @property
    def refs(self) -> list[str]:
        """The texts idf is counted over unless the caller says otherwise: the references."""
        return self.b


def check_matrix_texts(texts_a: object, texts_b: object) -> Matrix:
    """``pairwise``'s two lists, checked (``texts_b=None``: ``texts_a`` against itself); neither may be empty."""
    a = check_texts(texts_a, "texts_a")
    b = a if texts_b is None else check_texts(texts_b, "texts_b")
    if not a or not b:
        raise ValueError(f"{'texts_a' if not a else 'texts_b'} is empty: give at least one text")
    return Matrix(a, b)


UTILITIES = ("precision", "recall", "f1")
#: What MBR averages over a group: one of :data:`UTILITIES`.
Utility = Literal["precision", "recall", "f1"]


@dataclass(frozen=True)
class Samples:
    """``mbr``'s checked groups of samples, the optional pseudo-reference groups (one per sample group) and the
    utility averaged."""

    groups: list[list[str]]
    pseudo: list[list[str]] | None
    utility: Utility

    @property
    def refs(self) -> list[str]:
        """The texts idf is counted over: every pseudo-reference, else every sample."""
        return [text for group in (self.groups if self.pseudo is None else self.pseudo) for text in group]


def check_mbr(samples: object, references: object, utility: str) -> Samples:
    """``mbr``'s sample groups and optional pseudo-reference groups (one per sample group), checked."""
    if utility not in UTILITIES:
        raise ValueError(f"utility={utility!r} is not one of {', '.join(UTILITIES)}")
    groups = check_groups(samples, "samples")
    pseudo = None if references is None else check_groups(references, "references")
    if pseudo is not None and len(pseudo) != len(groups):
        raise ValueError(f"samples has {len(groups)} groups but references has {len(pseudo)}; give one list per group")
    return Samples(groups, pseudo, cast(Utility, utility))


__all__ = [
    "UTILITIES",
    "LongInputs",
    "Matrix",
    "Pairs",
    "Refs",
    "Samples",
    "Texts",
    "Utility",
    "check_groups",
    "check_hub_model_id",
    "check_idf_sents",
    "check_matrix_texts",
    "check_mbr",
    "check_num_layers",
    "check_options",
    "check_pairs",
    "check_positive_int",
    "check_texts",
]
