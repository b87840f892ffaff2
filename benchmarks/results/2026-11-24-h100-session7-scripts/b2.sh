#!/usr/bin/env bash
# Session 7: qwen35-tiny's greedy on the H100, old (5c4d614) vs new bundle on the same references, three fresh
# reference instances (make_refs_2026.py's qwen35 references differ between runs).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsbase && tar -C /tmp/bsbase -xJf .dev/s7/base.tar.xz
for i in 1 2 3; do
  python3 $SHARED/tools/make_refs_2026.py /tmp/refs$i qwen35-tiny > /tmp/refs.txt 2>&1 || tail -3 /tmp/refs.txt
  for b in /tmp/bsbase/bundle/run $BS; do
    echo "instance $i $( [ $b = $BS ] && echo new || echo old ): $(timeout 100 python3 benchmarks/parity_check.py $b /tmp/refs$i qwen35-tiny 2>&1 | sed 's/(prompt.*//' | tr -s ' ' | tr '\n' '|')"
  done
done
