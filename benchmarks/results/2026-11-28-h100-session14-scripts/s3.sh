#!/usr/bin/env bash
# Session 14, run S3: (a) the tidied f16-only norm and gated-activation dispatches: logits and ids against S2's
# build (.dev/carry_old, run with BLUESHIFT_SPLITK_FUSED=0: the tree before the tidy) and against
# BLUESHIFT_F16_ONLY=0; (b) the decode head with its norm in a dispatch of its own and 4-16 rows a workgroup
# (BLUESHIFT_HEAD_NORM_APART=1, BLUESHIFT_HEAD_ROWS) against the folded norm.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
bench() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 90 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json \
    > /tmp/o/bench-$m-$lab.json 2> /tmp/err.txt
  python3 - /tmp/o/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
print(f"{sys.argv[2]} {sys.argv[3]:8s} ttft {d['ttft_ms']:6.2f} first {d['prefill_first_submit_ms']:5.2f} rec {d['prefill_record_ms']:5.2f} gpu {d['prefill_gpu_ms']:6.2f} | prefill {d['prefill_tok_s']:8.0f} tok/s | decode {d['decode_tok_s']:7.1f} {d['pct_of_peak']:5.1f}% peak {d['peak_gb_s']:5.0f} load {d['load_s']:.2f}")
PY
  grep -E "internal|rror" /tmp/err.txt | head -3
}
plog() { local m=$1 lab=$2; shift 2; env "$@" $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/pl-$m-$lab.npy >/dev/null 2>/tmp/perr.txt || { echo "$m $lab: logits FAILED"; head -3 /tmp/perr.txt; }; }
ids() { local m=$1 lab=$2; shift 2; env "$@" $BS blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 32 > /tmp/ids-$m-$lab.txt 2>/dev/null; }
same() {  # model label env: logits and ids, defaults vs env
  local m=$1 lab=$2; shift 2
  plog $m new; plog $m $lab "$@"
  cmp -s /tmp/pl-$m-new.npy /tmp/pl-$m-$lab.npy && echo "$m prefill logits (300 rows): new == $lab ($*), bit for bit" \
    || { echo "$m logits DIFFER new vs $lab"; python3 .dev/s14/cmp.py /tmp/pl-$m-new.npy /tmp/pl-$m-$lab.npy; }
  rm -f /tmp/pl-$m-*.npy
  ids $m new; ids $m $lab "$@"
  cmp -s /tmp/ids-$m-new.txt /tmp/ids-$m-$lab.txt && echo "$m greedy ids (32 after 300): same" || echo "$m greedy ids DIFFER"
}
RE=BLUESHIFT_SPLITK_FUSED=0
NF=BLUESHIFT_FA_F16_OUT=0
mkdir -p /tmp/o /tmp/old && tar -C /tmp/old -xJf .dev/carry_old/bundle.tar.xz && cp -n /tmp/bs/bundle/lib/* /tmp/old/bundle/lib/
OLD=/tmp/old/bundle/run
vs_old() {  # model: logits and ids, this tree vs S2's build with splitk_reduce; and F16_ONLY=0
  local m=$1
  plog $m new; BLUESHIFT_SPLITK_FUSED=0 $OLD blueshift logits --model /tmp/$m --tokens $P --out /tmp/pl-$m-old.npy >/dev/null 2>&1
  plog $m f32 BLUESHIFT_F16_ONLY=0
  for r in old f32; do
    cmp -s /tmp/pl-$m-new.npy /tmp/pl-$m-$r.npy && echo "$m prefill logits (300 rows): new == $r, bit for bit" \
      || { echo "$m logits DIFFER new vs $r"; python3 .dev/s14/cmp.py /tmp/pl-$m-new.npy /tmp/pl-$m-$r.npy; }
  done
  rm -f /tmp/pl-$m-*.npy
  ids $m new; BLUESHIFT_SPLITK_FUSED=0 $OLD blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 32 > /tmp/ids-$m-old.txt 2>/dev/null
  cmp -s /tmp/ids-$m-new.txt /tmp/ids-$m-old.txt && echo "$m greedy ids (32 after 300): same as old" || echo "$m greedy ids DIFFER from old"
}
hbench() {  # model label env...: decode with a 16-token prompt; the head's and the norm's GPU time in the profiled step
  local m=$1 lab=$2; shift 2
  env "$@" timeout 60 $BS blueshift bench --model /tmp/$m --prompt-tokens 16 --gen-tokens 128 --reps 3 --json > /tmp/o/head-$m-$lab.json 2>/dev/null
  python3 - /tmp/o/head-$m-$lab.json $m $lab <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
k = d["gpu_ms_by_dispatch"]
hd = {n: round(v * 1000, 1) for n, v in k.items() if n.startswith("matvec") or n.startswith("rms")}
print(f"{sys.argv[2]} {sys.argv[3]:10s} decode {d['decode_tok_s']:7.1f} tok/s  head us {hd}")
PY
}
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B models"
vs_old m1q; vs_old m1f
A=BLUESHIFT_HEAD_NORM_APART=1
for i in 1 2; do
  hbench m1q fold4-$i; hbench m1q apart4-$i $A; hbench m1q apart8-$i $A BLUESHIFT_HEAD_ROWS=8; hbench m1q apart16-$i $A BLUESHIFT_HEAD_ROWS=16
  hbench m1f fold2-$i; hbench m1f apart2-$i $A; hbench m1f apart4-$i $A BLUESHIFT_HEAD_ROWS=4; hbench m1f apart8-$i $A BLUESHIFT_HEAD_ROWS=8
done
stamp "1B"
rm -rf /tmp/m1q /tmp/m1f
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B q4_k_m"
vs_old m8q
for i in 1 2; do
  hbench m8q fold4-$i; hbench m8q apart4-$i $A; hbench m8q apart8-$i $A BLUESHIFT_HEAD_ROWS=8; hbench m8q apart16-$i $A BLUESHIFT_HEAD_ROWS=16
done
tar -C /tmp -cJf $OUT/s3.tar.xz o
stamp "all done"
