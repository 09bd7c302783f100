#!/usr/bin/env bash
# Refits src/gate/heuristicWeights.json: heuristic-gate features of `make-tasks` tasks from training packages of
# the tiny model's corpus (never its held-out packages, on which the gate is evaluated), computed by the real
# engine with the bundled tiny model, then logistic regression (fit-heuristic.mjs). Needs the corpus:
# tools/tiny-model/reproduce.sh step 1 (or an existing tools/tiny-model/work/corpus). ~35 min on 2 cores.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${CORPUS:-$ROOT/tools/tiny-model/work/corpus}
OUT=$ROOT/.bench/gate-fit
PER_KIND=${PER_KIND:-40}
PACKAGES=(date-fns lodash rxjs webpack eslint @inversifyjs__core graphql undici fp-ts @reduxjs__toolkit find-my-way
  fast-json-stringify axios mocha avvio enhanced-resolve preact fast-uri fs-extra js-yaml terser yargs
  thread-stream @inversifyjs__container @fastify__merge-json-schemas ajv-keywords webpack-sources events env-var
  sonic-boom cmake-js redux minimist asynckit tapable light-my-request immer ws process-warning io-ts
  pino-std-serializers workerpool reselect lowdb iconv-lite)
mkdir -p "$OUT"
(cd "$ROOT" && node esbuild.mjs >/dev/null && npx tsc -p .)
features=()
for pkg in "${PACKAGES[@]}"; do
  dir=$CORPUS/$pkg
  [ -d "$dir" ] || { echo "missing $dir (build the corpus first)" >&2; exit 1; }
  tasks=$OUT/$pkg-$PER_KIND.jsonl
  [ -s "$tasks" ] || node "$ROOT/dist/cli.js" make-tasks "$dir" --out "$tasks" --per-kind "$PER_KIND" --cache "$OUT/cache"
  [ -s "$tasks" ] || continue
  node "$ROOT/dist/cli.js" bench --repo "$dir" --tasks "$tasks" --gate heuristic --features "$OUT/$pkg.features.jsonl" --skip-typing --json >/dev/null
  features+=("$OUT/$pkg.features.jsonl")
done
node "$ROOT/tools/gate/fit-heuristic.mjs" "$ROOT/src/gate/heuristicWeights.json" "${features[@]}"
