"""BERTScore as an ``evaluate`` metric, computed by fastbertscore (exact to bert-score 0.3.13)."""

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

This module computes it with fastbertscore: the same numbers as bert-score 0.3.13 (within 1e-6 in fp32), the
model kept loaded between calls, rescaling baselines from the Hub, and no network needed for the embedded default
model sentence-transformers/all-MiniLM-L6-v2. See the project docs (docs/differences.md) for where it differs
from bert-score on purpose (empty strings, models without a tuned layer, idf over one reference).
"""

_KWARGS_DESCRIPTION = """
BERTScore metrics with the hashcode from a source against one or more references.

Args:
    predictions (list of str): prediction/candidate sentences.
    references (list of str or list of list of str): one reference, or a list of references, per prediction.
        With several, the best one counts (separately for precision, recall and F1).
    lang (str): language of the sentences, e.g. "en" (roberta-large), "zh", "de". Needed with
        `rescale_with_baseline`. One of `lang` and `model_type` is required.
    model_type (str): model id or local folder, e.g. "sentence-transformers/all-MiniLM-L6-v2" (embedded, offline).
    num_layers (int): the layer of representation to use; default: the model's tuned layer (3 for the embedded
        default model), or three quarters of its depth for a model without one.
    verbose (bool): show progress bars.
    (every option below is a field of fastbertscore.Settings; an unknown keyword is a TypeError naming it)
    idf (bool): weight tokens by inverse document frequency over all references.
    device (str): "cpu", "cuda", "cuda:1"...; default cuda when available.
    batch_size (int): sentences per encoder batch.
    nthreads (int): accepted for compatibility.
    all_layers (bool): return scores of every layer: each list element is then a list over layers.
    rescale_with_baseline (bool): rescale with the baseline of the model and `lang`: (x - b) / (1 - b).
    baseline_path (str): a LAYER,P,R,F baseline file of your own.
    use_fast_tokenizer (bool): ask transformers for the fast tokenizer.
    baseline_repo (str, extra): the Hub dataset repo to take baselines from (default fastbertscore/baselines).
    baseline_revision (str, extra): its revision.
    long_inputs (str, extra): texts longer than the model's window: "truncate" (default, as bert-score),
        "window" (scored in full through overlapping windows) or "error".
    dtype (str, extra): "float32" (default, exact), "bfloat16" or "float16" (GPU): within about 2e-3, faster only
        on hardware with native support (several times slower on CPUs without AMX/AVX512-BF16), or "auto": the
        fastest precision that holds those bounds on the device. The resolved precision is named in the hashcode.
    window_stride (int, extra): with long_inputs="window", tokens neighbouring windows share (default a quarter).
    cache_mb (int, extra): megabytes of sentence embeddings kept in memory between calls.
    cache_dir (str, extra): a folder that keeps sentence embeddings across calls and restarts (checksummed files).
    memory_mb (int, extra): what one call holds at once beyond the model and its tokens (embeddings, matching
        buffers, the encoder's work on a batch); past it, embeddings later steps need spill to a temporary folder.
        Changes no number and is not in the hashcode (default: sized to the device).
    layer_registry (bool, extra): for a model without a published layer, use the one `bertscore tune-layer
        --record` saved (named in the hashcode's layer).

Returns:
    precision: list of float, one per prediction (in [-1, 1]; about 0.3-1 raw, about 0-1 rescaled).
    recall: list of float.
    f1: list of float.
    raw_precision, raw_recall, raw_f1 (with rescaling): the values before rescaling.
    best_reference_p, best_reference_r, best_reference_f (several references per prediction): the index of the
        reference that counted for each score.
    hashcode: str, every setting behind the numbers, e.g.
        "sentence-transformers/all-MiniLM-L6-v2_L3_no-idf_version=fastbertscore-0.3.0(hug_trans=5.23.0)".

Examples:

    >>> bertscore = evaluate.load("bertscore")
    >>> predictions = ["hello there", "general kenobi"]
    >>> references = ["hello there", "general kenobi"]
    >>> results = bertscore.compute(predictions=predictions, references=references,
    ...                             model_type="sentence-transformers/all-MiniLM-L6-v2")
    >>> [round(v, 2) for v in results["f1"]]
    [1.0, 1.0]
    >>> results["hashcode"].split("_version=")[0]
    'sentence-transformers/all-MiniLM-L6-v2_L3_no-idf'
    >>> results = bertscore.compute(predictions=["hello there"], references=[["hello here", "hello there"]],
    ...                             model_type="sentence-transformers/all-MiniLM-L6-v2")
    >>> round(results["f1"][0], 2), results["best_reference_f"]
    (1.0, [1])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BERTScore(evaluate.Metric):
    """``evaluate.load("bertscore", model_type=..., num_layers=...)``: keywords given at load time are this
    module's defaults (evaluate hands them to the constructor); ``compute()`` keywords win over them. That is how
    ``evaluate.evaluator``, which passes no metric arguments, scores with the model of your choice."""

    def __init__(self, *args, **kwargs):
        options = set(fastbertscore.Settings.names()) | {"verbose"}
        own = inspect.signature(evaluate.Metric.__init__).parameters
        unknown = [name for name in kwargs if name not in options and name not in own]
        if unknown:  # evaluate's constructor would drop it silently: a typo of a setting, say
            raise TypeError(
                f"evaluate.load('bertscore') got an unexpected keyword argument {unknown[0]!r}; "
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
