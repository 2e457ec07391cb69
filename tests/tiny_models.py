"""Build tiny randomly initialised encoders of each family, with tokenizers trained here, offline."""

from __future__ import annotations

import json
from pathlib import Path

import torch
import transformers as T
from tokenizers import (
    BertWordPieceTokenizer,
    ByteLevelBPETokenizer,
    SentencePieceUnigramTokenizer,
)

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A cat sat on the mat and looked at the window.",
    "Machine translation systems are evaluated against human references.",
    "It was raining heavily when the train finally arrived at the station.",
    "She bought three apples, two pears and a loaf of bread.",
    "The committee postponed its decision until next week.",
    "Researchers found that the new drug reduced symptoms in most patients.",
    "He plays the guitar every evening after dinner.",
    "Prices rose sharply after the announcement on Monday.",
    "Le chat est sur la table; über den Wolken, naïve café — 東京 😀.",
]

MAX_LEN = 40  # tokenizer model_max_length of the tiny models, to exercise truncation

#: How each family's config names a tiny model's sizes (width, depth, heads and feed-forward width; a tuple where
#: encoder and decoder each have one, None where the config has none) and what every tiny model of it sets besides.
_BERT = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")
_T5 = ("d_model", "num_layers", "num_heads", "d_ff")
_SEQ2SEQ = ("d_model", "encoder_layers", ("encoder_attention_heads", "decoder_attention_heads"))
_SEQ2SEQ += (("encoder_ffn_dim", "decoder_ffn_dim"),)
#: family → (config class, model class, size names, fixed settings): the one factory of tiny models, for the suite
#: (:func:`save_tiny`) and for the family fixtures (``tests/families/build_fixtures.py``).
ARCHITECTURES: dict[str, tuple[str, str, tuple, dict]] = {
    "bert": ("BertConfig", "BertModel", _BERT, {}),
    "roberta": ("RobertaConfig", "RobertaModel", _BERT, {}),
    "xlm-roberta": ("XLMRobertaConfig", "XLMRobertaModel", _BERT, {}),
    "camembert": ("CamembertConfig", "CamembertModel", _BERT, {}),
    "electra": ("ElectraConfig", "ElectraModel", _BERT, {"embedding_size": 16}),
    "albert": ("AlbertConfig", "AlbertModel", _BERT, {"embedding_size": 16}),
    "deberta": ("DebertaConfig", "DebertaModel", _BERT, {}),
    "deberta-v2": (  # v3-style: relative positions only
        "DebertaV2Config",
        "DebertaV2Model",
        _BERT,
        {"relative_attention": True, "position_biased_input": False, "pos_att_type": ["p2c", "c2p"]},
    ),
    "mpnet": ("MPNetConfig", "MPNetModel", _BERT, {}),
    "longformer": ("LongformerConfig", "LongformerModel", _BERT, {}),
    "bigbird": ("BigBirdConfig", "BigBirdModel", _BERT, {}),
    "modernbert": ("ModernBertConfig", "ModernBertModel", _BERT, {}),
    "distilbert": ("DistilBertConfig", "DistilBertModel", ("dim", "n_layers", "n_heads", "hidden_dim"), {}),
    "xlnet": ("XLNetConfig", "XLNetModel", ("d_model", "n_layer", "n_head", "d_inner"), {}),
    "xlm": ("XLMConfig", "XLMModel", ("emb_dim", "n_layers", "n_heads", None), {}),
    "t5": ("T5Config", "T5EncoderModel", _T5, {"d_kv": 16}),
    "mt5": ("MT5Config", "MT5ForConditionalGeneration", _T5, {"d_kv": 16}),
    "bart": ("BartConfig", "BartModel", _SEQ2SEQ, {"decoder_layers": 1}),
    "mbart": ("MBartConfig", "MBartForConditionalGeneration", _SEQ2SEQ, {"decoder_layers": 1}),
    "led": ("LEDConfig", "LEDForConditionalGeneration", _SEQ2SEQ, {"decoder_layers": 1}),
}


def tiny_model(family: str, vocab_size: int, layers: int, *, model_class: str | None = None, **config):
    """A randomly initialised ``family`` model of width 32, 2 heads and feed-forward width 37, ``layers`` deep, with
    ``config`` besides (positions, special token ids) and, where given, another ``model_class`` of the family."""
    config_class, default_class, (width, depth, heads, ffn), fixed = ARCHITECTURES[family]
    sizes: dict[str, int] = {width: 32, depth: layers}
    for names, value in ((heads, 2), (ffn, 37)):
        sizes.update(dict.fromkeys((names,) if isinstance(names, str) else names or (), value))
    settings = getattr(T, config_class)(vocab_size=vocab_size, **sizes, **fixed, **config)
    return getattr(T, model_class or default_class)(settings)


def _wordpiece(out: Path):
    trainer = BertWordPieceTokenizer(lowercase=True)
    trainer.train_from_iterator(CORPUS * 3, vocab_size=400, min_frequency=1)
    vocab = trainer.get_vocab()
    return T.BertTokenizer(vocab=vocab, model_max_length=MAX_LEN)


def _byte_bpe(prefix_space: bool):
    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(
        CORPUS * 3, vocab_size=500, min_frequency=1, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    )
    model = json.loads(trainer.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return T.RobertaTokenizer(
        vocab=model["vocab"], merges=merges, add_prefix_space=prefix_space, model_max_length=MAX_LEN
    )


def _unigram(cls, **kwargs):
    trainer = SentencePieceUnigramTokenizer()
    specials = [
        "<pad>",
        "</s>",
        "<unk>",
        "<s>",
        "<sep>",
        "<cls>",
        "<mask>",
        "[CLS]",
        "[SEP]",
        "[PAD]",
        "[UNK]",
        "[MASK]",
    ]
    trainer.train_from_iterator(CORPUS * 3, vocab_size=300, special_tokens=specials, unk_token="<unk>")
    vocab = [tuple(v) for v in json.loads(trainer.to_str())["model"]["vocab"]]
    return cls(vocab=vocab, unk_id=2, **kwargs) if cls is T.XLNetTokenizer else cls(vocab=vocab, **kwargs)


def _build(family: str):
    """(tokenizer, model) of one family."""
    if family in ("roberta", "roberta-noprefix"):  # the second as many Hub RoBERTa tokenizers are saved
        tok = _byte_bpe(prefix_space=family == "roberta")
        return tok, tiny_model("roberta", len(tok), 4, max_position_embeddings=MAX_LEN + 2, pad_token_id=1)
    if family == "xlm-roberta":
        tok = _unigram(T.XLMRobertaTokenizer, model_max_length=MAX_LEN)
        return tok, tiny_model(family, len(tok), 4, max_position_embeddings=MAX_LEN + 2, pad_token_id=tok.pad_token_id)
    if family == "xlnet":
        tok = _unigram(T.XLNetTokenizer, model_max_length=MAX_LEN)
        return tok, tiny_model(family, len(tok), 4)
    if family == "deberta-v2":  # and a tokenizer that reports no max length
        tok = _unigram(T.DebertaV2Tokenizer)
        return tok, tiny_model(family, len(tok), 4, max_position_embeddings=MAX_LEN, pad_token_id=tok.pad_token_id)
    if family in ("t5", "t5-generation"):  # the second a whole seq2seq model, for the evaluator and Trainer tests
        tok = _unigram(T.T5Tokenizer, extra_ids=0, model_max_length=MAX_LEN)
        if family == "t5":
            return tok, tiny_model(family, len(tok), 4, pad_token_id=tok.pad_token_id)
        ids = {"eos_token_id": tok.eos_token_id, "decoder_start_token_id": tok.pad_token_id}
        generation = "T5ForConditionalGeneration"
        return tok, tiny_model("t5", len(tok), 2, model_class=generation, pad_token_id=tok.pad_token_id, **ids)
    if family == "bart":
        tok = _byte_bpe(prefix_space=True)
        ids = {"pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
        return tok, tiny_model(family, len(tok), 4, max_position_embeddings=64, **ids)
    tok = _wordpiece(None)
    if family == "xlm":
        return tok, tiny_model(family, len(tok), 4, max_position_embeddings=64, pad_index=tok.pad_token_id)
    if family == "modernbert":
        ids = {"bos_token_id": tok.cls_token_id, "eos_token_id": tok.sep_token_id}
        ids |= {"pad_token_id": tok.pad_token_id, "cls_token_id": tok.cls_token_id, "sep_token_id": tok.sep_token_id}
        return tok, tiny_model(family, len(tok), 4, max_position_embeddings=64, **ids)
    return tok, tiny_model(
        family, len(tok), 4, max_position_embeddings=64
    )  # bert, electra, distilbert, albert, deberta


FAMILIES = [
    "bert",
    "roberta",
    "xlm-roberta",
    "electra",
    "distilbert",
    "albert",
    "xlnet",
    "xlm",
    "deberta",
    "deberta-v2",
    "t5",
    "bart",
    "modernbert",
]


def save_tiny(family: str, out: Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    tok, model = _build(family)
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    tok.save_pretrained(out)
    model.save_pretrained(out)
    return out
