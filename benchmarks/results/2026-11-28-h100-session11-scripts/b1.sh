#!/usr/bin/env bash
# Session 11, run B1: the persistent decode kernel's loads in flight. Q4_K headers one word a lane shared by
# shuffles (HDR_SHUFFLE) with 2-4 parts per lane; F16 parts per lane (F16_PARTS 1, 2, 4). Registers from
# BLUESHIFT_PIPELINE_STATS; decode-path logits compared bit for bit against the defaults.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128000)) for _ in range(96)))")
bench() {  # model label env...
  local m=$1 lab=$2; shift 2
  env BLUESHIFT_PIPELINE_STATS=1 "$@" timeout 90 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json \
    > $OUT/bench-$m-$lab.json 2> /tmp/err.txt
  local regs=$(grep -E "pipeline-stats decode_persistent" /tmp/err.txt | grep -oE "[Rr]egister[^,]*" | head -1)
  python3 - $OUT/bench-$m-$lab.json $m $lab "$regs" <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
k = d.get("gpu_ms_by_kernel", {})
print(f"{sys.argv[2]} {sys.argv[3]:14s} decode {d['decode_tok_s']:7.1f} tok/s {d['pct_of_peak']:5.1f}% peak {d['peak_gb_s']:6.0f} | step-gpu {sum(k.values()):.3f} ms |",
      ", ".join(f"{n} {v:.3f}" for n, v in sorted(k.items(), key=lambda t: -t[1])[:3]), "|", sys.argv[4])
PY
}
same() {  # model label env... : decode-path logits against the defaults
  local m=$1 lab=$2; shift 2
  [ -f /tmp/ref-$m.npy ] || BLUESHIFT_PERSISTENT=1 $BS blueshift logits --model /tmp/$m --tokens $T --step --out /tmp/ref-$m.npy >/dev/null 2>&1
  env BLUESHIFT_PERSISTENT=1 "$@" $BS blueshift logits --model /tmp/$m --tokens $T --step --out /tmp/v.npy >/dev/null 2>&1
  cmp -s /tmp/ref-$m.npy /tmp/v.npy && echo "$m $lab: decode logits bit-identical" || { echo "$m $lab: logits DIFFER"; python3 .dev/s11/cmp.py /tmp/v.npy /tmp/ref-$m.npy; }
}
[ -d /tmp/m1q ] || $BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B models"
same m1q hdr BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1
same m1f f16p4 BLUESHIFT_PERSISTENT_F16_PARTS=4
same m1q xe BLUESHIFT_PERSISTENT_X_EARLY=1
bench m1q base
bench m1q hdr BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1
bench m1q xe BLUESHIFT_PERSISTENT_X_EARLY=1
bench m1q hdr-xe BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1 BLUESHIFT_PERSISTENT_X_EARLY=1
bench m1q base2
bench m1f base
bench m1f pk-f1 BLUESHIFT_PERSISTENT=1
bench m1f pk-f2 BLUESHIFT_PERSISTENT=1 BLUESHIFT_PERSISTENT_F16_PARTS=2
bench m1f pk-f4 BLUESHIFT_PERSISTENT=1 BLUESHIFT_PERSISTENT_F16_PARTS=4
stamp "1B done"
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
stamp "8B synth"
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1
stamp "8B q4_k_m"
bench m8q base
bench m8q hdr BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1
bench m8q xe BLUESHIFT_PERSISTENT_X_EARLY=1
bench m8q hdr-p3 BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1 BLUESHIFT_PERSISTENT_PARTS=3
bench m8q hdr-p4 BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1 BLUESHIFT_PERSISTENT_PARTS=4
bench m8q int-hdr BLUESHIFT_Q4K_DOT=int BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1
bench m8q int-hdr-p3 BLUESHIFT_Q4K_DOT=int BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1 BLUESHIFT_PERSISTENT_PARTS=3
stamp "8B q4 done"; rm -rf /tmp/m8q
$BS blueshift convert /tmp/h8 /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B f16"
bench m8f base
bench m8f f2 BLUESHIFT_PERSISTENT_F16_PARTS=2
bench m8f f4 BLUESHIFT_PERSISTENT_F16_PARTS=4
bench m8f base2
stamp "all done"
