#!/usr/bin/env bash
# Prepared in session 19 for the next session (not run: no device time left). Carry .gl, .dev/carry,
# .dev/peer. (1) A 3B F16 (hidden 3072, o projection 18 MiB), where both of session 19's size rules are least sure:
# the read-ahead (off by default below a 32 MiB o projection) at 4 / 8 MiB, and the matvec butterfly (off by default
# above hidden 2048) forced on; two rounds. Predicted: the read-ahead between the 1B's loss and the 8B's +3%, so within
# +-2%; the butterfly within +-2%; the 8B q4_k_m with the butterfly back in its head within +-0.5%. (2) The final
# table at this tree: run_peer.sh, 1B and 8B, q4_k_m and f16 (predicted: the 8B f16 ~190 tok/s, the other rows as
# session 19's D4). ~9 minutes in all.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o /tmp/peer-out
row() { local tag=$1 m=$2; shift 2; env "$@" timeout 60 $BS blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}%')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-3b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m3f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models3
for i in 1 2; do
  row m3f-def-$i /tmp/m3f
  row m3f-kb4096-$i /tmp/m3f BLUESHIFT_PREFETCH_KB=4096
  row m3f-kb8192-$i /tmp/m3f BLUESHIFT_PREFETCH_KB=8192
  row m3f-tr1-$i /tmp/m3f BLUESHIFT_MATVEC_TREDUCE=1
done
rm -rf /tmp/m3f
stamp "3B"
# The 8B q4_k_m's head (Q6_K matvec) lost the butterfly with fe8e1c4's size rule; its row was not measured after.
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
for i in 1 2; do row m8q-def-$i /tmp/m8q; row m8q-tr1-$i /tmp/m8q BLUESHIFT_MATVEC_TREDUCE=1; done
rm -rf /tmp/m8q
stamp "8B q4 head"
tar -C /tmp -cJf $OUT/e1.tar.xz o
timeout 150 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "1B peer"
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/e1.tar.xz o
timeout $(( 580 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "8B peer"
cat /tmp/peer-out/peer.md
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/e1.tar.xz o
