#!/usr/bin/env bash
# Session 20, call 2. (1) The 3B f16 with the read-ahead and the butterfly together (E1 measured each alone: +3.6%,
# +1.7%), to set both size rules. Predicted: the two add, ~+5% over today's default. (2) Whether the q4_k_m rows
# still want the persistent kernel now that the per-phase path has the read-ahead, and the integer-dot Q4_K matvec
# there (BLUESHIFT_Q4K_DOT=intmx, 2.9 TB/s standalone against 2.1 for the float form, session 16). Session 17 had
# the 8B per-phase at 226 against 256 persistent. Predicted: per-phase float ~235, intmx ~255-270, with read-ahead
# a few % more; the 1B stays persistent (its phases are too small). gpu_ms_by_dispatch printed for the per-phase rows.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o2
row() { local tag=$1 m=$2; shift 2; env "$@" timeout 60 $BS blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 3 --json > /tmp/o2/$tag.json 2> /tmp/o2/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o2/$tag.json'));print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}%  disp {d[\"dispatches_per_token\"]}')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-3b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m3f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
for i in 1 2; do
  row m3f-kb8192-$i /tmp/m3f BLUESHIFT_PREFETCH_KB=8192
  row m3f-kb8192tr1-$i /tmp/m3f BLUESHIFT_PREFETCH_KB=8192 BLUESHIFT_MATVEC_TREDUCE=1
done
rm -rf /tmp/m3f
stamp 3B
tar -C /tmp -cJf $OUT/e2.tar.xz o2
for s in 3.2-1b 3.1-8b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
  for i in 1 2; do
    row q$s-def-$i /tmp/mq
    row q$s-np-$i /tmp/mq BLUESHIFT_NO_PERSISTENT=1
    row q$s-npmx-$i /tmp/mq BLUESHIFT_NO_PERSISTENT=1 BLUESHIFT_Q4K_DOT=intmx
    row q$s-npmx-kb4096-$i /tmp/mq BLUESHIFT_NO_PERSISTENT=1 BLUESHIFT_Q4K_DOT=intmx BLUESHIFT_PREFETCH_KB=4096
    row q$s-npmx-kb1024-$i /tmp/mq BLUESHIFT_NO_PERSISTENT=1 BLUESHIFT_Q4K_DOT=intmx BLUESHIFT_PREFETCH_KB=1024
  done
  rm -rf /tmp/mq
  stamp $s
  tar -C /tmp -cJf $OUT/e2.tar.xz o2
done
for t in q3.1-8b-np-1 q3.1-8b-npmx-1 q3.1-8b-npmx-kb4096-1; do echo "== $t"; python3 -c "
import json;d=json.load(open('/tmp/o2/$t.json'));g=d['gpu_ms_by_dispatch']
print('  sum', round(sum(g.values()),3))
for k,v in sorted(g.items(), key=lambda x:-x[1])[:12]: print('  %-40s %.3f' % (k, v))
"; done
