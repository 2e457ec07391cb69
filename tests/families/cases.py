"""What the family matrix scores: the fixtures, the pairs and the options, shared by the recorder and the tests.

Plain Python and the standard library only, so the transformers-4 venv (``record_reference.py``) and the suite
read the very same cases.
"""

from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "data" / "families"
RECORD = FIXTURES / "bert_score_0.3.13_transformers_4.57.json"
RATINGS = REPO / "tests" / "data" / "wmt_toen_sample.tsv"

#: Every family bert-score 0.3.13 supports, in the order of the docs table; funnel is the one it cannot cut.
FAMILIES = [
    "bert",
    "roberta",
    "xlm-roberta",
    "distilbert",
    "albert",
    "electra",
    "deberta",
    "deberta-v2",
    "mpnet",
    "xlnet",
    "t5",
    "mt5",
    "bart",
    "mbart",
    "longformer",
    "led",
    "bigbird",
    "camembert",
    "modernbert",
    "funnel",
]
UNSUPPORTED = {"funnel"}
DEPTH = 3  # every fixture has 3 layers

#: (name, bert-score keyword arguments): layer 1, the last layer with idf, and every layer.
OPTIONS = [
    ("layer1", {"num_layers": 1}),
    ("last_idf", {"num_layers": DEPTH, "idf": True}),
    ("all_layers", {"num_layers": DEPTH, "all_layers": True}),
]
#: The two tokenizer kinds (bert-score's use_fast_tokenizer).
KINDS = [("slow", False), ("fast", True)]
N_SHORT = 24


def pairs() -> tuple[list[str], list[str]]:
    """24 real MT pairs (every fifth row of the WMT21 is-en sample) and two pairs of over 512 tokens each."""
    with RATINGS.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    short = rows[::5][:N_SHORT]
    cands, refs = [r["candidate"] for r in short], [r["reference"] for r in short]
    by_segment = {r["seg_id"]: r["reference"] for r in rows}  # the 14 segments' references
    # Two pairs of over 512 tokens each (about 650 with these tokenizers): long enough to be cut, short enough
    # that models reading them whole (DeBERTa-v3, XLNet, mT5) stay quick.
    cands += [" ".join(r["candidate"] for r in rows[:19]), " ".join(r["candidate"] for r in rows[60:70])]
    refs += [" ".join(by_segment.values()), " ".join(reversed(by_segment.values()))]
    return cands, refs


def linked(family: str) -> str:
    """A path to the fixture of ``family`` whose text holds no stray family name.

    bert-score picks T5EncoderModel when ``"t5" in model_type``; a checkout under a folder whose name happens to
    contain "t5" must not change what it loads, so the fixtures are reached through a link in a folder of ours.
    """
    root = Path(tempfile.gettempdir()) / f"fbs-families-{os.getpid()}"
    root.mkdir(exist_ok=True)
    link = root / f"tiny-{family}"
    if not link.exists():
        link.symlink_to(FIXTURES / f"tiny-{family}", target_is_directory=True)
    return str(link)
