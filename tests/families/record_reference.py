"""Record bert-score 0.3.13 as it was published: run on transformers 4.57, the last transformers 4 release.

Papers of 2023–2025 ran bert-score on transformers 4; on transformers 5 it behaves differently for some families
(prefix spaces, OverflowError on unlimited tokenizers). This script scores every case of ``cases.py`` with
bert-score on transformers 4.57.6 and writes the scores, the token ids it fed the model and the versions to
``tests/data/families/bert_score_0.3.13_transformers_4.57.json``, which ``tests/test_families.py`` compares with.

The one command, from the repository root (bert-score, torch and sentencepiece come from the main environment
through ``--system-site-packages``; only transformers is older in the venv)::

    python -m venv --system-site-packages /tmp/venv-tf4 && /tmp/venv-tf4/bin/pip install -q transformers==4.57.6 \
      && /tmp/venv-tf4/bin/python tests/families/build_fixtures.py && /tmp/venv-tf4/bin/python tests/families/record_reference.py

(``build_fixtures.py`` only when the fixtures themselves should change.)
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cases


def _versions() -> dict[str, str]:
    import torch
    import transformers

    names = ("bert-score", "transformers", "tokenizers", "torch", "sentencepiece", "huggingface-hub")
    found = {name: importlib.metadata.version(name) for name in names}
    found["python"] = platform.python_version()
    found["cpu"] = platform.processor() or platform.machine()
    assert transformers.__version__.startswith("4."), (
        f"run in the transformers-4 venv (found {transformers.__version__})"
    )
    assert found["bert-score"] == "0.3.13", found
    found["torch_capability"] = torch.backends.cpu.get_cpu_capability()
    return found


def _score(path: str, use_fast: bool, options: dict, cands: list[str], refs: list[str]) -> dict:
    import bert_score

    try:
        P, R, F = bert_score.score(cands, refs, model_type=path, batch_size=1, use_fast_tokenizer=use_fast, **options)
    except Exception as error:  # noqa: BLE001 - recorded: the family matrix checks that we refuse it too, or say what we do
        return {"error": f"{type(error).__name__}: {error}"}
    return {"P": P.tolist(), "R": R.tolist(), "F": F.tolist()}


def _tokens(path: str, use_fast: bool, texts: list[str]) -> dict:
    """The ids bert-score's sent_encode gives each text, and whether its tokenizer took the prefix-space branch."""
    from bert_score.utils import get_tokenizer, sent_encode
    from transformers import GPT2Tokenizer, RobertaTokenizer

    tokenizer = get_tokenizer(path, use_fast)
    try:
        ids = [sent_encode(tokenizer, text) for text in texts]
    except Exception as error:  # noqa: BLE001 - recorded as the reference's behaviour, whatever it raises
        return {"class": type(tokenizer).__name__, "error": f"{type(error).__name__}: {error}"}
    return {
        "class": type(tokenizer).__name__,
        "prefix_space_branch": isinstance(tokenizer, (GPT2Tokenizer, RobertaTokenizer)),
        "model_max_length": min(tokenizer.model_max_length, 10**18),
        "ids": ids,
    }


def main() -> None:
    warnings.filterwarnings("ignore")
    cands, refs = cases.pairs()
    from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING_NAMES

    record = {
        "versions": _versions(),
        "script": "tests/families/record_reference.py",
        "batch_size": 1,
        "options": dict(cases.OPTIONS),
        "families": {},
        # The model types whose slow tokenizer is GPT2Tokenizer or RobertaTokenizer, where bert-score
        # passes add_prefix_space=True: fastbertscore.models.loading keeps the same list.
        "prefix_space_model_types": sorted(
            k for k, v in TOKENIZER_MAPPING_NAMES.items() if v[0] in ("GPT2Tokenizer", "RobertaTokenizer")
        ),
    }
    for family in cases.FAMILIES:
        path = cases.linked(family)
        entry = record["families"][family] = {}
        for kind, use_fast in cases.KINDS:
            entry[kind] = {"tokens": _tokens(path, use_fast, cands + refs)}
            for name, options in cases.OPTIONS:
                entry[kind][name] = _score(path, use_fast, options, cands, refs)
            status = entry[kind]["layer1"].get("error", "ok")[:90]
            print(f"{family:12s} {kind:4s} {entry[kind]['tokens']['class']:28s} {status}", flush=True)
    cases.RECORD.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    print(f"wrote {cases.RECORD.relative_to(cases.REPO)} ({cases.RECORD.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
