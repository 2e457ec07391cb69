"""``python -m fastbertscore [CANDIDATE REFERENCE]``: score one pair on the embedded default model."""

from __future__ import annotations

import sys

from fastbertscore import DEFAULT_MODEL, score

EXAMPLE = ("The cat sat on the mat.", "A cat was sitting on the mat.")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (0, 2):
        print("usage: python -m fastbertscore [CANDIDATE REFERENCE]", file=sys.stderr)
        return 2
    cand, ref = args or EXAMPLE
    (P, R, F), hashcode = score([cand], [ref], model_type=DEFAULT_MODEL, return_hash=True)
    print(f"candidate: {cand}\nreference: {ref}")
    print(f"{hashcode} P: {P.item():.6f} R: {R.item():.6f} F1: {F.item():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
