"""Build the family-matrix fixtures: one tiny random encoder per architecture family bert-score supports.

Each fixture is what a Hub checkpoint of that family looks like when transformers 4 saved it: the config, the
weights (a whole seq2seq model where the Hub's are seq2seq: T5, mT5, mBART, LED), and a tokenizer trained here on
real MT sentences, saved with both its slow (Python/sentencepiece) and its fast (tokenizers) files, so either
``use_fast_tokenizer`` setting loads the kind asked for. 3 layers of width 32; folder names carry the family,
since bert-score branches on substrings of ``model_type`` (``"t5" in model_type`` picks T5EncoderModel).

Run once, in the transformers-4.57 venv (see ``record_reference.py`` for the one command that makes it), from
the repository root, after ``python benchmarks/wmt_data.py`` (the training sentences)::

    /tmp/venv-tf4/bin/python tests/families/build_fixtures.py

It writes ``tests/data/families/tiny-<family>/``; the folders are committed, so the suite never trains.
"""

from __future__ import annotations

import csv
import itertools
import json
import shutil
import sys
import tempfile
import zlib
from pathlib import Path

import torch
import transformers as T

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cases import FAMILIES, FIXTURES  # the one list of families, read by the recorder and the suite too
from tiny_models import tiny_model  # the one factory of tiny models

REPO = Path(__file__).resolve().parents[2]
OUT = FIXTURES
SHARED = REPO / "benchmarks" / "data" / "human_judgments_toen.tsv"

LIMIT = 512  # the tokenizers' model_max_length, as most Hub checkpoints of these families report
UNLIMITED = int(1e30)  # what transformers 4 reports for a tokenizer saved without a limit (DeBERTa-v3, XLNet, mT5)


def corpus() -> list[str]:
    """Real MT sentences (WMT to-English candidates and references) to train the tokenizers on."""
    if not SHARED.exists():
        sys.exit(f"needs {SHARED} (the WMT judgments: python benchmarks/wmt_data.py) to train the tokenizers")
    with SHARED.open(encoding="utf-8", newline="") as f:
        rows = list(itertools.islice(csv.DictReader(f, delimiter="\t"), 4000))
    return [row["reference"] for row in rows] + [row["candidate"] for row in rows]


def wordpiece_vocab(tmp: Path, specials: list[str]) -> str:
    from tokenizers import BertWordPieceTokenizer

    trainer = BertWordPieceTokenizer(lowercase=True)
    trainer.train_from_iterator(corpus(), vocab_size=800, min_frequency=2, special_tokens=specials)
    trainer.save_model(str(tmp))
    return str(tmp / "vocab.txt")


def byte_bpe_files(tmp: Path, specials: list[str]) -> tuple[str, str]:
    from tokenizers import ByteLevelBPETokenizer

    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(corpus(), vocab_size=800, min_frequency=2, special_tokens=specials)
    trainer.save_model(str(tmp))
    return str(tmp / "vocab.json"), str(tmp / "merges.txt")


def sentencepiece_model(tmp: Path, *, t5_ids: bool = False, fairseq: bool = False) -> str:
    """A unigram sentencepiece model; T5's layout puts <pad>, </s>, <unk> at 0, 1, 2; fairseq's (XLM-R, CamemBERT,
    mBART) has no <pad> piece, since those tokenizers place <s>, <pad>, </s>, <unk> themselves."""
    import sentencepiece as spm

    text = tmp / "corpus.txt"
    text.write_text("\n".join(corpus()), encoding="utf-8")
    if t5_ids:
        ids, symbols = {"pad_id": 0, "eos_id": 1, "unk_id": 2, "bos_id": -1}, []
    elif fairseq:
        ids, symbols = {"unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1}, []
    else:
        ids, symbols = (
            {"unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": 3},
            ["<mask>", "<cls>", "<sep>", "[CLS]", "[SEP]", "[PAD]", "[MASK]"],
        )
    spm.SentencePieceTrainer.train(
        input=str(text),
        model_prefix=str(tmp / "spm"),
        vocab_size=800,
        model_type="unigram",
        character_coverage=1.0,
        user_defined_symbols=symbols,
        **ids,
        minloglevel=2,
    )
    return str(tmp / "spm.model")


def _tokenizer(family: str, tmp: Path):
    """The slow tokenizer of ``family`` (its fast twin is converted from it when saved)."""
    lim = {"model_max_length": LIMIT}
    if family in ("bert", "distilbert", "electra"):
        vocab = wordpiece_vocab(tmp, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
        cls = {"bert": T.BertTokenizer, "distilbert": T.DistilBertTokenizer, "electra": T.ElectraTokenizer}[family]
        return cls(vocab, **lim)
    if family == "mpnet":
        return T.MPNetTokenizer(wordpiece_vocab(tmp, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]), **lim)
    if family == "funnel":
        specials = ["<pad>", "<unk>", "<cls>", "<sep>", "<mask>", "<s>", "</s>"]
        return T.FunnelTokenizer(wordpiece_vocab(tmp, specials), **lim)
    if family in ("roberta", "bart", "longformer", "led"):
        vocab, merges = byte_bpe_files(tmp, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
        cls = {
            "roberta": T.RobertaTokenizer,
            "bart": T.BartTokenizer,
            "longformer": T.LongformerTokenizer,
            "led": T.LEDTokenizer,
        }[family]
        return cls(vocab, merges, **lim)
    if family == "deberta":
        vocab, merges = byte_bpe_files(tmp, ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"])
        return T.DebertaTokenizer(vocab, merges, **lim)
    if family in ("t5", "mt5"):
        model = sentencepiece_model(tmp, t5_ids=True)
        return T.T5Tokenizer(model, extra_ids=0, **(lim if family == "t5" else {"model_max_length": UNLIMITED}))
    model = sentencepiece_model(tmp, fairseq=family in ("xlm-roberta", "camembert", "mbart"))
    if family == "deberta-v2":  # v3-style: the tokenizer reports no limit
        return T.DebertaV2Tokenizer(model, model_max_length=UNLIMITED)
    if family == "xlnet":
        return T.XLNetTokenizer(model, model_max_length=UNLIMITED)
    cls = {
        "xlm-roberta": T.XLMRobertaTokenizer,
        "albert": T.AlbertTokenizer,
        "mbart": T.MBartTokenizer,
        "bigbird": T.BigBirdTokenizer,
        "camembert": T.CamembertTokenizer,
    }[family]
    return cls(model, **lim)


def _modernbert_tokenizer(tmp: Path):
    """ModernBERT ships a fast-only tokenizer (``PreTrainedTokenizerFast``): byte-level BPE, [CLS] … [SEP]."""
    from tokenizers import ByteLevelBPETokenizer, Tokenizer, processors

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab, merges = byte_bpe_files(tmp, specials)
    backend = Tokenizer.from_str(ByteLevelBPETokenizer(vocab, merges, add_prefix_space=False).to_str())
    cls_id, sep_id = backend.token_to_id("[CLS]"), backend.token_to_id("[SEP]")
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)]
    )
    return T.PreTrainedTokenizerFast(
        tokenizer_object=backend,
        model_max_length=LIMIT,
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        unk_token="[UNK]",
        mask_token="[MASK]",
    )


def _model(family: str, tok):
    """A tiny random model of ``family`` (:func:`tiny_models.tiny_model`, 3 layers), shaped like that family's Hub
    checkpoints: their positions, special token ids and model class."""
    n, pad = max(len(tok), tok.vocab_size, *tok.all_special_ids) + 1, {"pad_token_id": tok.pad_token_id}
    if family == "funnel":  # its depth is its blocks'
        cfg = T.FunnelConfig(
            vocab_size=n, block_sizes=[1, 1, 1], num_decoder_layers=1, d_model=32, n_head=2, d_head=16, d_inner=37
        )
        return T.FunnelModel(cfg)
    return tiny_model(family, n, 3, **_fixture_config(family, tok, pad))


def _fixture_config(family: str, tok, pad: dict[str, int]) -> dict[str, object]:
    """What the fixture of ``family`` sets beyond its tiny size, as that family's Hub checkpoints do."""
    if family in ("bert", "distilbert", "albert", "electra"):
        return {"max_position_embeddings": LIMIT}
    if family in ("roberta", "xlm-roberta", "camembert", "mpnet"):  # positions numbered from padding_idx + 1
        return {"max_position_embeddings": LIMIT + 2, **pad}
    if family == "longformer":
        return {"max_position_embeddings": LIMIT + 2, "attention_window": [8, 8, 8], **pad}
    if family in ("deberta", "xlnet"):
        return {"max_position_embeddings": LIMIT, **pad} if family == "deberta" else pad
    if family == "deberta-v2":  # as microsoft/deberta-v3-base
        v3 = {
            "position_buckets": 256,
            "max_relative_positions": -1,
            "norm_rel_ebd": "layer_norm",
            "share_att_key": True,
        }
        return {"max_position_embeddings": LIMIT, **v3, **pad}
    if family in ("t5", "mt5"):  # whole seq2seq checkpoints, as t5-small and google/mt5-small are
        ends = {"eos_token_id": tok.eos_token_id, "decoder_start_token_id": tok.pad_token_id}
        whole = {"model_class": "T5ForConditionalGeneration"} if family == "t5" else {}
        return {"num_decoder_layers": 2, **ends, **whole, **pad}
    ends = {"bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id}
    if family in ("bart", "mbart"):  # facebook/bart-large is a BartModel checkpoint
        return {"max_position_embeddings": LIMIT + 8, **ends, **pad}
    if family == "led":
        windows = {"max_decoder_position_embeddings": 64, "attention_window": [8, 8, 8]}
        return {"max_encoder_position_embeddings": LIMIT + 8, **windows, **ends, **pad}
    if family == "bigbird":  # full attention: bert-score's inputs are short, and block-sparse needs long ones
        ends["sep_token_id"] = tok.sep_token_id
        return {"max_position_embeddings": LIMIT, "attention_type": "original_full", **ends, **pad}
    if family == "modernbert":
        ids = {"bos_token_id": tok.cls_token_id, "eos_token_id": tok.sep_token_id}
        ids |= {"cls_token_id": tok.cls_token_id, "sep_token_id": tok.sep_token_id}
        return {"max_position_embeddings": LIMIT, "global_attn_every_n_layers": 2, "local_attention": 16, **ids, **pad}
    raise KeyError(family)


def build(family: str) -> Path:
    out = OUT / f"tiny-{family}"
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        slow = _modernbert_tokenizer(tmp) if family == "modernbert" else _tokenizer(family, tmp)
        torch.manual_seed(zlib.crc32(family.encode()))
        model = _model(family, slow).eval()
        model.save_pretrained(out, safe_serialization=True)
        slow.save_pretrained(out)
        if family != "modernbert":  # save the fast twin's tokenizer.json beside the slow files
            fast = T.AutoTokenizer.from_pretrained(out, use_fast=True)
            assert fast.is_fast, family
            fast.save_pretrained(out)
    return out


def main() -> None:
    assert T.__version__.startswith("4."), f"run in the transformers-4 venv (found {T.__version__})"
    for family in sys.argv[1:] or FAMILIES:
        out = build(family)
        size = sum(p.stat().st_size for p in out.iterdir())
        print(f"{family:12s} {out.relative_to(REPO)}  {size / 1e3:.0f} kB", flush=True)
    (OUT / "versions.json").write_text(
        json.dumps(
            {"transformers": T.__version__, "torch": torch.__version__, "made_by": "tests/families/build_fixtures.py"},
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
