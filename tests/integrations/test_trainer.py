"""The Seq2SeqTrainer recipe of docs/integrations.md: a tiny random T5 trained for a few steps on a CPU logs an
eval_bertscore_f1 equal to scoring its decoded predictions directly."""

from __future__ import annotations

import datasets
import numpy as np
import pytest
from tolerances import assert_close, prf_bounds

import fastbertscore as fb


def recipe_compute_metrics(scorer, tokenizer):
    """docs/integrations.md's compute_metrics, word for word but for the closure."""

    def compute_metrics(eval_pred):
        predictions, labels = eval_pred
        predictions = np.where(predictions != -100, predictions, tokenizer.pad_token_id)
        labels = np.where(labels != -100, labels, tokenizer.pad_token_id)
        P, R, F = scorer.score(
            tokenizer.batch_decode(predictions, skip_special_tokens=True),
            tokenizer.batch_decode(labels, skip_special_tokens=True),
        )
        return {
            "bertscore_precision": P.mean().item(),
            "bertscore_recall": R.mean().item(),
            "bertscore_f1": F.mean().item(),
        }

    return compute_metrics


@pytest.mark.slow
def test_seq2seq_trainer_logs_the_bertscore_of_its_generations(tiny_model, mt_pairs, tmp_path):
    import transformers

    path = tiny_model("t5-generation")
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.T5ForConditionalGeneration.from_pretrained(path)
    # A few words each, never a special token: an untrained model would otherwise often say nothing at all.
    model.generation_config.update(
        max_new_tokens=8,
        min_new_tokens=3,
        suppress_tokens=[i for i in tokenizer.all_special_ids if i != tokenizer.eos_token_id],
    )

    def encode(batch):
        out = tokenizer(batch["source"], truncation=True)
        out["labels"] = tokenizer(text_target=batch["target"], truncation=True)["input_ids"]
        return out

    pairs = {"source": mt_pairs[0][:16], "target": mt_pairs[1][:16]}
    data = datasets.Dataset.from_dict(pairs).map(encode, batched=True, remove_columns=["source", "target"])
    train, dev = data.select(range(10)), data.select(range(10, 16))
    scorer = fb.BERTScorer(model_type=fb.DEFAULT_MODEL)
    args = transformers.Seq2SeqTrainingArguments(
        str(tmp_path / "out"),
        predict_with_generate=True,
        max_steps=4,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        eval_strategy="steps",
        eval_steps=4,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
        learning_rate=1e-3,
    )
    trainer = transformers.Seq2SeqTrainer(
        model=model,
        args=args,
        train_dataset=train,
        eval_dataset=dev,
        processing_class=tokenizer,
        data_collator=transformers.DataCollatorForSeq2Seq(tokenizer, model=model),
        compute_metrics=recipe_compute_metrics(scorer, tokenizer),
    )
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "eval_bertscore_f1" in entry]
    assert len(logged) == 1 and logged[0]["step"] == 4

    # The same generations, decoded and scored here with a fresh call.
    generated = trainer.predict(dev).predictions
    generated = np.where(generated != -100, generated, tokenizer.pad_token_id)
    predictions = tokenizer.batch_decode(generated, skip_special_tokens=True)
    references = [tokenizer.decode(ids, skip_special_tokens=True) for ids in dev["labels"]]
    assert sum(bool(p.strip()) for p in predictions) >= 3  # real generations, not empty strings scoring 0
    F = fb.score(predictions, references, model_type=fb.DEFAULT_MODEL)[2]
    assert_close(logged[0]["eval_bertscore_f1"], F.mean(), prf_bounds()[2], "eval_bertscore_f1")
