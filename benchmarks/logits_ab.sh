#!/usr/bin/env bash
# The decode kernels' logits under several settings or trees, each against the first, on one synth model:
#   benchmarks/logits_ab.sh RUNNER config quant REF[@RUNNER2]:VAR=VAL,... NAME[@RUNNER2]:VAR=VAL,... ...
# Synthesizes and converts the config's checkpoint once, runs `logits --step` (the decode path, teacher-forced)
# over 200 random token ids for each variant (decode_ab.sh's syntax: NAME@RUNNER2 runs it through another runner,
# e.g. an older bundle's `run`), and prints logits_diff.py's line for each variant against the first.
set -euo pipefail
runner=$1; cfg=$2; quant=$3; shift 3
[ $# -ge 2 ] || { echo "logits_ab.sh: expected a reference and at least one variant (NAME[@RUNNER]:ENV)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_WORK:-/tmp/bs-logits-ab}/$cfg-$quant
rm -rf "$work"; mkdir -p "$work"
. "$here/ab_common.sh"
ab_model "$runner" "$here/configs/$cfg.json" "$quant" "$work"
toks=$(python3 - "$here/configs/$cfg.json" <<'PY'
import json, random, sys
vocab = json.load(open(sys.argv[1]))["vocab_size"]
random.seed(7)
print(",".join(str(random.randrange(min(1000, vocab // 2), min(100000, vocab))) for _ in range(200)))
PY
)
ref=
for v in "$@"; do
  ab_variant "$runner" "$v"
  env "${ab_env[@]}" "$ab_run" blueshift logits --model "$work/m" --tokens "$toks" --out "$work/$ab_name.npy" --step \
    >/dev/null
  if [ -z "$ref" ]; then
    ref=$ab_name
  else
    python3 "$here/logits_diff.py" "$work/$ref.npy" "$work/$ab_name.npy" --what "decode kernels" \
      --label "$cfg $quant $ab_name vs $ref"
  fi
done
rm -rf "$work"
