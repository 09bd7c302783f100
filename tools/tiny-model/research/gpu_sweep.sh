#!/usr/bin/env bash
# Trains several recipes at once on one GPU and compares them on the held-out packages (torch; evaluate.py
# --ckpt, research/copy_probe.py), to find a recipe worth the 2-core CPU run that builds the fixture (reproduce.sh).
# The GPU runs the same steps as the CPU would (train.py --device cuda); only float sums differ.
#   bash research/gpu_sweep.sh DATA.tar.gz research/sweeps/NAME.txt OUTDIR [MAX_MINUTES] [KEEP]
# Runs in tools/tiny-model (the pipeline's scripts); relative paths are taken from there.
# OUTDIR gets results.tgz (each variant's training log with its copy probe, and evaluate.py's report) and the
# KEEP best checkpoints (by held-out gate AUC), matrices in f16 as the GGUF stores them.
# DATA.tar.gz: work/{tokenizer.json,eval.jsonl,corpus/,*.jsonl} as reproduce.sh makes them (paths inside: work/...).
# Variant file: one recipe a line, "name train.py-arguments" (without --tokenizer/--corpus/--out/--device).
set -uo pipefail
cd "$(dirname "$0")/.."
DATA=$1 VARIANTS=$2 OUT=$3 MAX=${4:-5} KEEP=${5:-3}
PY=${PY:-python3} DEVICE=${DEVICE:-cuda}
RES=work/sweep-results
mkdir -p "$OUT" "$RES"
tar -xzf "$DATA"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader || true
while read -r name args; do
  [ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
  ( $PY train.py --tokenizer work/tokenizer.json --corpus work/corpus --device "$DEVICE" --save-every 1000000 \
      --max-minutes "$MAX" --out "work/$name.pt" $args > "$RES/$name.log" 2>&1
    $PY evaluate.py --ckpt "work/$name.pt" --device "$DEVICE" ${EVAL_ARGS:-} --tokenizer work/tokenizer.json --eval work/eval.jsonl \
      --out "$RES/$name.eval.json" > /dev/null 2>> "$RES/$name.log"
    $PY research/copy_probe.py --tokenizer work/tokenizer.json --corpus work/corpus "work/$name.pt" >> "$RES/$name.log" 2>&1
  ) &
done < "$VARIANTS"
wait
for f in "$RES"/*.log; do
  n=$(basename "$f" .log)
  echo "== $n: $(grep -E '^step' "$f" | tail -1)"
  grep -E 'copy|lines|Error|error' "$f" | tail -3
  [ -f "$RES/$n.eval.json" ] && $PY -c "
import json,sys; r=json.load(open(sys.argv[1]))
print('auc %.3f none %.3f retrieved %.3f oracle %.3f rate %.2f/%.2f' % (r['gate_auc_cross_vs_infile'], r['cross_none_cc']['ES'],
  r['cross_retrieved_cc']['ES'], r['cross_oracle_cc']['ES'], r['retrieval_rate']['cross'], r['retrieval_rate']['infile']))" "$RES/$n.eval.json"
done
tar -czf "$OUT/results.tgz" -C work sweep-results
$PY - "$RES" "$OUT" "$KEEP" <<'PY'
import glob, json, os, sys, torch
res, out, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
auc = {os.path.basename(f)[:-len('.eval.json')]: json.load(open(f))['gate_auc_cross_vs_infile'] for f in glob.glob(res + '/*.eval.json')}
for name in sorted(auc, key=auc.get, reverse=True)[:keep]:
    ck = torch.load(f'work/{name}.pt', map_location='cpu')
    ck['model'] = {k: v.half() if v.dim() >= 2 else v for k, v in ck['model'].items()}
    torch.save(ck, f'{out}/{name}.pt')
PY
