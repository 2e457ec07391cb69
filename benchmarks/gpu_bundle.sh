#!/usr/bin/env bash
# Wheels the lent GPU machine lacks (it has Python 3.12 and torch 2.11 + CUDA 13, no network): our pinned
# transformers/tokenizers/huggingface_hub, the reference bert-score, and what they need that the image's versions
# do not satisfy. Run here, from the repository root; .whl/ is git-ignored and travels with `carry: [".whl"]`.
# On the GPU machine, before anything else:
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
#     && export PYTHONPATH=/tmp/site:$PWD
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .whl && mkdir -p .whl
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
  platforms+=(--platform "$p")
done
fetch() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${platforms[@]}" -d .whl "$@"
}
fetch transformers==5.23.0 tokenizers==0.23.3 huggingface_hub==2.4.0 bert-score==0.3.13 torchmetrics==1.9.0
# transformers 5 and huggingface_hub 2 need these newer than an older image may hold.
fetch hf-xet==1.8.0 httpx2==2.16.2 httpcore2==2.16.2 truststore==0.10.5 "safetensors>=0.6" "typer>=0.15"
du -sh .whl && ls .whl
