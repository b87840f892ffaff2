#!/usr/bin/env bash
# Session 12, run R1: where the 1B's TTFT goes (host recording vs GPU time), the prefill submitted in parts while
# the rest records (BLUESHIFT_PREFILL_SPLIT), and Q4_K headers shared by shuffles inside the math (HDR_SHUFFLE)
# at 2-4 parts a lane.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128000)) for _ in range(96)))")
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
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
print(f"{sys.argv[2]} {sys.argv[3]:10s} ttft {d['ttft_ms']:6.2f} rec {d['prefill_record_ms']:5.2f} gpu {d['prefill_gpu_ms']:6.2f} | decode {d['decode_tok_s']:7.1f} {d['pct_of_peak']:5.1f}% peak {d['peak_gb_s']:5.0f} | pk {k.get('decode_persistent', 0):.3f} ms |", sys.argv[4])
PY
}
same() {  # model label env... : decode-path logits against the defaults
  local m=$1 lab=$2; shift 2
  [ -f /tmp/ref-$m.npy ] || BLUESHIFT_PERSISTENT=1 $BS blueshift logits --model /tmp/$m --tokens $T --step --out /tmp/ref-$m.npy >/dev/null 2>&1
  env BLUESHIFT_PERSISTENT=1 "$@" $BS blueshift logits --model /tmp/$m --tokens $T --step --out /tmp/v.npy >/dev/null 2>&1
  cmp -s /tmp/ref-$m.npy /tmp/v.npy && echo "$m $lab: decode logits bit-identical" || { echo "$m $lab: logits DIFFER"; python3 .dev/s12/cmp.py /tmp/v.npy /tmp/ref-$m.npy; }
}
ids() {  # model label env... : 48 greedy ids after a 300-token prompt, split against one command buffer
  local m=$1 lab=$2; shift 2
  env "$@" $BS blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 48 > /tmp/ids-$lab.txt 2>/tmp/gen-$lab.txt
  grep -oE "submits [0-9]+ prefill" /tmp/gen-$lab.txt | head -1
}
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B models"
ids m1q split; ids m1q one BLUESHIFT_PREFILL_SPLIT=0
cmp -s /tmp/ids-split.txt /tmp/ids-one.txt && echo "m1q greedy ids: split == one" || { echo "m1q greedy ids DIFFER"; head -c 300 /tmp/ids-split.txt /tmp/ids-one.txt; }
same m1q hdr BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1
for m in m1q m1f; do
  bench $m split; bench $m one BLUESHIFT_PREFILL_SPLIT=0; bench $m split2; bench $m one2 BLUESHIFT_PREFILL_SPLIT=0
done
bench m1q hdr2 BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1
bench m1q hdr3 BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1 BLUESHIFT_PERSISTENT_PARTS=3
bench m1q hdr4 BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1 BLUESHIFT_PERSISTENT_PARTS=4
stamp "1B done"; rm -rf /tmp/m1f
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B q4_k_m"
bench m8q split
bench m8q hdr2 BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1
bench m8q hdr3 BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1 BLUESHIFT_PERSISTENT_PARTS=3
bench m8q one BLUESHIFT_PREFILL_SPLIT=0
bench m8q hdr4 BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1 BLUESHIFT_PERSISTENT_PARTS=4
bench m8q ihdr3 BLUESHIFT_Q4K_DOT=int BLUESHIFT_PERSISTENT_HDR_SHUFFLE=1 BLUESHIFT_PERSISTENT_PARTS=3
stamp "all done"
