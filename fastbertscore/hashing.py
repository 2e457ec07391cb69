"""The hash code that names every setting behind a score, in ``bert-score``'s format."""

from __future__ import annotations

from fastbertscore._version import __version__


def get_hash(
    model: str,
    num_layers: int | str,
    idf: bool,
    rescale_with_baseline: bool,
    use_custom_baseline: bool,
    use_fast_tokenizer: bool,
    *,
    idf_map: str | None = None,
    long_inputs: str = "truncate",
    dtype: str = "float32",
    baseline: str | None = None,
) -> str:
    """``{model}_L{n}_{idf|no-idf}_version=fastbertscore-{v}(hug_trans={v})[-rescaled|-custom-rescaled][_fast-tokenizer]``,
    bert-score's format, then a suffix for each setting of ours that moves a number: ``_idf=map:<digest>``,
    ``_long=window(stride=N)`` or ``_long=error``, ``_dtype=bfloat16``, ``_baseline=<digest of the table>``.

    >>> get_hash("roberta-large", 17, False, True, False, False).split("_version=")[0]
    'roberta-large_L17_no-idf'
    >>> get_hash("roberta-large", 17, False, False, False, False, dtype="bfloat16").endswith(")_dtype=bfloat16")
    True
    """
    from transformers import __version__ as transformers_version

    text = f"{model}_L{num_layers}{'_idf' if idf else '_no-idf'}_version=fastbertscore-{__version__}"
    text += f"(hug_trans={transformers_version})"
    if rescale_with_baseline:
        text += "-custom-rescaled" if use_custom_baseline else "-rescaled"
    if use_fast_tokenizer:
        text += "_fast-tokenizer"
    if idf_map is not None:
        text += f"_idf={idf_map}"
    if long_inputs != "truncate":
        text += f"_long={long_inputs}"
    if dtype != "float32":
        text += f"_dtype={dtype}"
    if baseline is not None:
        text += f"_baseline={baseline}"
    return text
