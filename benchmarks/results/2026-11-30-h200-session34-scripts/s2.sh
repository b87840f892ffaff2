#!/usr/bin/env bash
# S2 (session 34): S1 after the argmax keys moved a cache line apart (params.h kArgmaxKeyStride) in slices of 512 rows:
# greedy's argmax folded into the head (BLUESHIFT_HEAD_ARGMAX) and the next step's embedding written by the sampler
# (BLUESHIFT_SAMPLER_EMBED), on and off in one command, on the 1B and 8B q4_k_m and the 1B f16; `bench` 512 + 128,
# medians of 5, the variants alternating, the base first and last. Then greedy ids of 64 tokens (`generate --json`),
# both on against both off, each twice, and with BLUESHIFT_PERSISTENT_FOLD_O=0. Carry .gl and .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/s2
OFF="BLUESHIFT_HEAD_ARGMAX=0 BLUESHIFT_SAMPLER_EMBED=0"
for spec in llama-3.2-1b:q4_k_m llama-3.1-8b:q4_k_m llama-3.2-1b:f16; do
  cfg=${spec%%:*} q=${spec#*:}
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json $q /tmp/m
  stamp "$cfg $q converted"
  o=/tmp/s2/$cfg-$q; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  ab_bench $o base1 $BS /tmp/m/m 512 128 5 $OFF
  ab_bench $o both1 $BS /tmp/m/m 512 128 5
  ab_bench $o argmax $BS /tmp/m/m 512 128 5 BLUESHIFT_SAMPLER_EMBED=0
  ab_bench $o embed $BS /tmp/m/m 512 128 5 BLUESHIFT_HEAD_ARGMAX=0
  ab_bench $o both2 $BS /tmp/m/m 512 128 5
  ab_bench $o base2 $BS /tmp/m/m 512 128 5 $OFF
  python3 - $o <<'PY'
import json, sys
for n in ("base1", "both1", "argmax", "embed", "both2", "base2"):
    d = json.load(open(f"{sys.argv[1]}/{n}.json"))
    s = {k: round(v * 1000, 1) for k, v in d["gpu_ms_by_dispatch"].items()
         if k.startswith(("embed", "argmax", "sample", "matvec q6k 128256", "matvec f16 128256", "rms_norm"))}
    print(f"  {n:7s} {d['decode_tok_s']:8.1f} tok/s, p50 {d['decode_ms_per_token_p50']:.4f} ms, "
          f"dispatches {d['dispatches_per_token']}, us: {s}")
PY
  # The ids twice each way, and with the o projection's float atomics off (BLUESHIFT_PERSISTENT_FOLD_O=0: bitwise
  # reproducible), to tell run-to-run float reordering from a change of the folds.
  for v in on off on2 off2 on-nofold off-nofold; do
    env $([[ $v = off* ]] && echo $OFF) $([[ $v = *nofold ]] && echo BLUESHIFT_PERSISTENT_FOLD_O=0) $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
      --max-tokens 64 --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$v.txt
  done
  for pair in "on off" "on on2" "off off2" "on-nofold off-nofold"; do
    set -- $pair
    cmp -s $o/ids-$1.txt $o/ids-$2.txt && echo "  greedy ids $1 / $2: same ($(wc -w < $o/ids-$1.txt) tokens)" \
      || echo "  greedy ids $1 / $2: DIFFER from token $(python3 -c "import sys; a, b = (open(f).read().split() for f in sys.argv[1:]); print(next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))))" $o/ids-$1.txt $o/ids-$2.txt)"
  done
  stamp "$cfg $q done"
  tar -C /tmp -cJf $OUT/s2.tar.xz s2
done
