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

_SIZE = {"hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 2, "intermediate_size": 37}
MAX_LEN = 40  # tokenizer model_max_length of the tiny models, to exercise truncation


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
    bert_tok = lambda: _wordpiece(None)
    if family == "bert":
        tok = bert_tok()
        return tok, T.BertModel(T.BertConfig(vocab_size=len(tok), max_position_embeddings=64, **_SIZE))
    if family in ("roberta", "roberta-noprefix"):  # the second as many Hub RoBERTa tokenizers are saved
        tok = _byte_bpe(prefix_space=family == "roberta")
        cfg = T.RobertaConfig(vocab_size=len(tok), max_position_embeddings=MAX_LEN + 2, pad_token_id=1, **_SIZE)
        return tok, T.RobertaModel(cfg)
    if family == "xlm-roberta":
        tok = _unigram(T.XLMRobertaTokenizer, model_max_length=MAX_LEN)
        cfg = T.XLMRobertaConfig(
            vocab_size=len(tok), max_position_embeddings=MAX_LEN + 2, pad_token_id=tok.pad_token_id, **_SIZE
        )
        return tok, T.XLMRobertaModel(cfg)
    if family == "electra":
        tok = bert_tok()
        return tok, T.ElectraModel(
            T.ElectraConfig(vocab_size=len(tok), embedding_size=16, max_position_embeddings=64, **_SIZE)
        )
    if family == "distilbert":
        tok = bert_tok()
        cfg = T.DistilBertConfig(
            vocab_size=len(tok), dim=32, n_layers=4, n_heads=2, hidden_dim=37, max_position_embeddings=64
        )
        return tok, T.DistilBertModel(cfg)
    if family == "albert":
        tok = bert_tok()
        return tok, T.AlbertModel(
            T.AlbertConfig(vocab_size=len(tok), embedding_size=16, max_position_embeddings=64, **_SIZE)
        )
    if family == "xlnet":
        tok = _unigram(T.XLNetTokenizer, model_max_length=MAX_LEN)
        return tok, T.XLNetModel(T.XLNetConfig(vocab_size=len(tok), d_model=32, n_layer=4, n_head=2, d_inner=37))
    if family == "xlm":
        tok = bert_tok()
        cfg = T.XLMConfig(
            vocab_size=len(tok),
            emb_dim=32,
            n_layers=4,
            n_heads=2,
            max_position_embeddings=64,
            pad_index=tok.pad_token_id,
        )
        return tok, T.XLMModel(cfg)
    if family == "deberta":
        tok = bert_tok()
        return tok, T.DebertaModel(T.DebertaConfig(vocab_size=len(tok), max_position_embeddings=64, **_SIZE))
    if family == "deberta-v2":  # v3-style: relative positions only, and a tokenizer that reports no max length
        tok = _unigram(T.DebertaV2Tokenizer)
        cfg = T.DebertaV2Config(
            vocab_size=len(tok),
            max_position_embeddings=MAX_LEN,
            relative_attention=True,
            position_biased_input=False,
            pos_att_type=["p2c", "c2p"],
            pad_token_id=tok.pad_token_id,
            **_SIZE,
        )
        return tok, T.DebertaV2Model(cfg)
    if family == "t5":
        tok = _unigram(T.T5Tokenizer, extra_ids=0, model_max_length=MAX_LEN)
        cfg = T.T5Config(
            vocab_size=len(tok), d_model=32, d_kv=16, d_ff=37, num_layers=4, num_heads=2, pad_token_id=tok.pad_token_id
        )
        return tok, T.T5EncoderModel(cfg)
    if family == "t5-generation":  # a whole seq2seq model, for the evaluator and Trainer tests
        tok = _unigram(T.T5Tokenizer, extra_ids=0, model_max_length=MAX_LEN)
        cfg = T.T5Config(
            vocab_size=len(tok),
            d_model=32,
            d_kv=16,
            d_ff=37,
            num_layers=2,
            num_heads=2,
            pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
            decoder_start_token_id=tok.pad_token_id,
        )
        return tok, T.T5ForConditionalGeneration(cfg)
    if family == "bart":
        tok = _byte_bpe(prefix_space=True)
        cfg = T.BartConfig(
            vocab_size=len(tok),
            d_model=32,
            encoder_layers=4,
            decoder_layers=1,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=37,
            decoder_ffn_dim=37,
            max_position_embeddings=64,
            pad_token_id=1,
            bos_token_id=0,
            eos_token_id=2,
        )
        return tok, T.BartModel(cfg)
    if family == "modernbert":
        tok = bert_tok()
        cfg = T.ModernBertConfig(
            vocab_size=len(tok),
            max_position_embeddings=64,
            pad_token_id=tok.pad_token_id,
            bos_token_id=tok.cls_token_id,
            eos_token_id=tok.sep_token_id,
            cls_token_id=tok.cls_token_id,
            sep_token_id=tok.sep_token_id,
            **_SIZE,
        )
        return tok, T.ModernBertModel(cfg)
    raise KeyError(family)


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
