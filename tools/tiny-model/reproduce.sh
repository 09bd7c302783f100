#!/usr/bin/env bash
# Rebuilds test/fixtures/models/repogate-tiny.gguf from scratch on a 2-core CPU machine (README.md; the model card is
# test/fixtures/models/repogate-tiny.md): corpus -> tokenizer -> Repoformer samples (this project's retriever) ->
# two training stages -> GGUF export -> tokenizer cases for the unit test -> export verification -> held-out evaluation. Seeds are fixed.
# Needs: Node 20 with the project's dependencies installed (npm ci), Debian's python3-torch, python3-numpy and
# libopenblas0-pthread (use /usr/bin/python3), the npm registry for the corpus packages.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
PY=${PY:-/usr/bin/python3}
export OPENBLAS_NUM_THREADS=1
W=work
mkdir -p $W/pkgs
STAGE1_STEPS=${STAGE1_STEPS:-1300}
STAGE2_STEPS=${STAGE2_STEPS:-0}  # the optional oracle-CC stage (research/README.md: it did not help; off)

# 1. Corpus: the exact corpus packages (lock file) plus the project's own node_modules.
cp corpus-packages/package.json corpus-packages/package-lock.json $W/pkgs/
(cd $W/pkgs && npm ci --ignore-scripts --no-audit --no-fund)
$PY build_corpus.py $W/pkgs/node_modules "$ROOT/node_modules" --out $W/corpus

# 2. Tokenizer.
$PY tok.py train $W/corpus --vocab 4096 --out $W/tokenizer.json

# 3. Samples with CC from this project's retriever (compiled TypeScript in out/).
(cd "$ROOT" && npx tsc -p .)
node make_samples.js $W/corpus --split train --tasks-per-kind 150 --out $W/train.jsonl
node make_samples.js $W/corpus --split heldout --out $W/eval.jsonl

# 4. Training (~55 min on 2 shared cores): code + FIM + Repoformer layout. Optional second stage: STAGE2_STEPS=320.
$PY train.py --tokenizer $W/tokenizer.json --samples $W/train.jsonl --corpus $W/corpus \
  --steps "$STAGE1_STEPS" --out $W/stage1.pt
cp $W/stage1.pt $W/model.pt
if [ "$STAGE2_STEPS" -gt 0 ]; then
  $PY train.py --tokenizer $W/tokenizer.json --samples $W/train.jsonl --corpus $W/corpus --init $W/stage1.pt \
    --steps "$STAGE2_STEPS" --lr 1e-3 --lm-share 0.05 --positive-share 0.5 --oracle-cc-share 0.5 --seed 1 --out $W/model.pt
fi

# 5. Export, test fixtures, verification, evaluation.
$PY export_gguf.py --tokenizer $W/tokenizer.json --ckpt $W/model.pt --out "$ROOT/test/fixtures/models/repogate-tiny.gguf"
$PY make_tokenizer_cases.py --tokenizer $W/tokenizer.json --out "$ROOT/test/fixtures/models/repogate-tiny.tokenizer-cases.json"
$PY verify.py --ckpt $W/model.pt --gguf "$ROOT/test/fixtures/models/repogate-tiny.gguf" --tokenizer $W/tokenizer.json \
  --corpus $W/corpus --eval $W/eval.jsonl --out $W/verify.json
$PY evaluate.py --gguf "$ROOT/test/fixtures/models/repogate-tiny.gguf" --tokenizer $W/tokenizer.json \
  --eval $W/eval.jsonl --out $W/eval-report.json
