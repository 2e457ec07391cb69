"""The hash code that names every setting behind a score, in ``bert-score``'s format."""

from __future__ import annotations

from ._version import __version__


def get_hash(
    model: str,
    num_layers: int,
    idf: bool,
    rescale_with_baseline: bool,
    use_custom_baseline: bool,
    use_fast_tokenizer: bool,
) -> str:
    """``{model}_L{n}_{idf|no-idf}_version=fastbertscore-{v}(hug_trans={v})[-rescaled|-custom-rescaled][_fast-tokenizer]``.

    >>> get_hash("roberta-large", 17, False, True, False, False).split("_version=")[0]
    'roberta-large_L17_no-idf'
    """
    from transformers import __version__ as transformers_version

    text = f"{model}_L{num_layers}{'_idf' if idf else '_no-idf'}_version=fastbertscore-{__version__}"
    text += f"(hug_trans={transformers_version})"
    if rescale_with_baseline:
        text += "-custom-rescaled" if use_custom_baseline else "-rescaled"
    if use_fast_tokenizer:
        text += "_fast-tokenizer"
    return text
