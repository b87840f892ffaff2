#!/usr/bin/env bash
# P7 (session 29): O2's probe at the phases' own sizes. bs_micro --rows-copies (new) holds the matrix N times and sweeps
# the copies in turn with a barrier between, so a matrix of one phase's size is read from memory each time and each
# dispatch's ramp and last round count as a phase's do. stream_read runs the same way over the same copies.
# Shapes: the 8B's gate/up of one layer (28672 x 4096, 66 MB), its down (4096 x 14336, 33 MB), its q/k/v (6144 x 4096,
# 14 MB), the 1B's gate/up (16384 x 2048, 19 MB); each ~0.5 GB over all copies. And O2's 73728 x 4096 in one copy.
# Predicted: the kernel's shape (640 x1, PARTS 1, PIPE 1, HEADER 1) at a lower share of stream_read than O2's 88-89%:
# ~70-80% on gate/up, ~60-75% on q/k/v; stream_read itself ~2.5-3.2 TB/s with a dispatch boundary every 14-66 MB.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
for shape in 73728:4096:1 28672:4096:8 4096:14336:16 6144:4096:36 16384:2048:28; do
  IFS=: read -r m k c <<< "$shape"
  timeout 100 $BS bs_micro --rows --rows-m $m --rows-k $k --rows-copies $c --rows-wg 512,640 --rows-per-sm 1 \
    --rows-parts 1,2 --rows-pipe 0,1 --rows-header 0,1 --reps 10 --json > /tmp/o/rows-$m-$k.json
  python3 - /tmp/o/rows-$m-$k.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = d["rows_bytes"] / 1e6
print(f"{d['rows_m']} x {d['rows_k']} ({n:.0f} MB) x {d['rows_copies']}: stream_read {d['stream_read_gb_s']:.0f} GB/s")
for r in sorted(d["rows_sweep"], key=lambda r: -r["gb_s"]):
    us = r["ms"] * 1000 / d["rows_copies"]
    print(f"  wg {r['wg']:4} parts {r['parts']} pipe {r['pipe']} header {r['header']}: {r['gb_s']:6.0f} GB/s "
          f"({100 * r['gb_s'] / d['stream_read_gb_s']:.0f}%), {us:6.1f} us a copy")
PY
  stamp "rows $m x $k"
done
tar -C /tmp -cJf $OUT/p7.tar.xz o
