"""``python -m fastbertscore [CANDIDATE REFERENCE]``: score one pair on the embedded default model."""

from __future__ import annotations

import sys

from fastbertscore import DEFAULT_MODEL, score

EXAMPLE = ("The cat sat on the mat.", "A cat was sitting on the mat.")
USAGE = "usage: python -m fastbertscore [--] [CANDIDATE REFERENCE]"
HELP = f"""{USAGE}

Scores one candidate against one reference on the embedded default model ({DEFAULT_MODEL}); with no texts, an
example pair. Texts that start with '-' follow '--'. For files, other models and options: bertscore -c CANDS -r REFS
(bertscore --help)."""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--"]:
        args = args[1:]
    elif any(arg in ("-h", "--help") for arg in args):
        print(HELP)
        return 0
    else:
        flag = next((arg for arg in args if arg.startswith("-") and arg != "-"), None)
        if flag is not None:  # '--memory_mb 5' is not a pair of texts
            print(
                f"python -m fastbertscore takes two texts, not options ({flag!r}); for files and options use "
                "bertscore -c CANDS -r REFS, and put '--' before texts that start with '-'",
                file=sys.stderr,
            )
            return 2
    if len(args) not in (0, 2):
        print(
            f"{USAGE}\n(got {len(args)} texts; give a candidate and a reference, or none for an example)",
            file=sys.stderr,
        )
        return 2
    cand, ref = args or EXAMPLE
    (P, R, F), hashcode = score([cand], [ref], model_type=DEFAULT_MODEL, return_hash=True)
    print(f"candidate: {cand}\nreference: {ref}")
    print(f"{hashcode} P: {P.item():.6f} R: {R.item():.6f} F1: {F.item():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
