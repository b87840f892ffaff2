#!/usr/bin/env bash
# O2 (session 29): the persistent kernel's Q4_K loads alone, swept (bs_micro --rows,
# stream_rows.comp): which shape of a subgroup's chain of loads streams near the floor? Needs bs_micro in the bundle:
# bundle without `rm -f /tmp/bundle/bin/bs_*` (or keep bin/bs_micro).
# Shapes: the 8B's gate/up (rows of 4,096: 16 blocks), its down (rows of 14,336: 56 blocks), the 1B's gate/up (2,048).
# ~170 MB a matrix, so that L2 (50 MB) holds little of it.
# Predicted: stream_read over the same bytes ~4.4 TB/s. The kernel's shape (wg 640, 1 a SM, PARTS 1, PIPE 1, HEADER
# 1) ~2.3-2.9 TB/s, as N7's loads-only kernel (2.458 ms a step, 0.65 of it barriers and staging); HEADER 0 within
# ~5% of it (N7: without the codes' loads, 3.7%). If 2 workgroups a SM or 1,024 wide reach >= 85% of stream_read
# where 1 x 640 does not, what bounds decode is warps in flight, and the kernel should trade registers for them.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
for shape in 73728:4096 20480:14336 147456:2048; do
  m=${shape%%:*}; k=${shape#*:}
  timeout 150 $BS bs_micro --rows --rows-m $m --rows-k $k --reps 10 --json > /tmp/o/rows-$k.json
  python3 - /tmp/o/rows-$k.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"k={d['rows_k']}: stream_read {d['stream_read_gb_s']:.0f} GB/s over {d['rows_bytes'] / 1e6:.0f} MB")
for r in sorted(d["rows_sweep"], key=lambda r: -r["gb_s"]):
    print(f"  wg {r['wg']:4} x{r['per_sm']} parts {r['parts']} pipe {r['pipe']} header {r['header']}: "
          f"{r['gb_s']:6.0f} GB/s ({100 * r['gb_s'] / d['stream_read_gb_s']:.0f}%)")
PY
  stamp "rows k=$k"
done
tar -C /tmp -cJf $OUT/o2.tar.xz o
