#!/usr/bin/env bash
# The GPU bundle: two commands of at most 9 minutes each on the lent GPU machine (torch 2.11, transformers 5.17,
# no network), after one packing step here.
#
#   here:   bash benchmarks/gpu_run.sh pack   # .gpu/ (git-ignored): the WMT pairs, bert-score 0.3.13, our wheel
#   there (carry: [".gpu"]):
#           bash benchmarks/gpu_run.sh 1      # versions, TF32, SDPA; parity GPU vs CPU; speed at 10k pairs
#           bash benchmarks/gpu_run.sh 2      # parity of the MiniLM shape; speed at 100k pairs
#
# Results go to $OUT/gpu_results.md and $OUT/gpu_results.json after each size (benchmarks/ without $OUT).
# `python benchmarks/gpu.py --dry-run` runs the same steps on a CPU (tests/test_gpu_bundle.py).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  pack)
    rm -rf .gpu && mkdir -p .gpu/wheels
    cp ../shared/data/human_judgments_toen.tsv .gpu/
    python3 -m pip download -q --no-deps --only-binary=:all: -d .gpu/wheels bert-score==0.3.13
    python3 -m pip wheel -q --no-deps -w .gpu/wheels .
    du -sh .gpu && ls .gpu .gpu/wheels
    ;;
  1 | 2)
    site="${TMPDIR:-/tmp}/fastbertscore-gpu-site"
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$site" .gpu/wheels/*.whl
    export PYTHONPATH="$site" TOKENIZERS_PARALLELISM=false
    out="${OUT:-benchmarks}"
    timeout 530 python3 benchmarks/gpu.py --part "$1" --data .gpu/human_judgments_toen.tsv --out "$out" \
      --root "${TMPDIR:-/tmp}/fastbertscore-gpu-models"
    ;;
  *)
    echo "usage: bash benchmarks/gpu_run.sh pack | 1 | 2" >&2
    exit 2
    ;;
esac
