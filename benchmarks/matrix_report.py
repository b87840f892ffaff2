#!/usr/bin/env python3
"""Collects OUT_DIR/<model>.<quant>.json from run_matrix.sh into matrix.json, matrix.md and matrix.png.
Usage: matrix_report.py OUT_DIR [CEILING_GB_S]
The bandwidth floor of a model is CEILING / (weight + KV bytes per token), with the ceiling fixed (default
3000 GB/s, the lease H100's measured copy rate) rather than each run's own streaming measurement, which
varies (one run measured 1678 GB/s with 16 GB of weights resident)."""
import glob, json, os, sys

out = sys.argv[1]
ceiling = float(sys.argv[2]) if len(sys.argv) > 2 else 3000.0
rows = []
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    if os.path.basename(f).startswith("matrix"):
        continue
    try:
        j = json.load(open(f))
    except Exception:
        continue
    name, quant = os.path.basename(f)[:-5].rsplit(".", 1)
    j["name"], j["quant_mode"] = name, quant
    floor_tok_s = ceiling * 1e9 / (j["weight_bytes_per_token"] + j["kv_bytes_per_token"])
    j["floor_tok_s"] = floor_tok_s
    j["pct_of_floor"] = 100 * j["decode_tok_s"] / floor_tok_s
    # Memory goal: vram <= 1.1 x (weights + KV cache) + 64 MiB (weights here include a tied embedding once).
    if "kv_cache_bytes" in j:
        j["vram_goal_bytes"] = 1.1 * (j["weight_bytes"] + j["kv_cache_bytes"]) + 64 * 2**20
    rows.append(j)
json.dump(rows, open(os.path.join(out, "matrix.json"), "w"), indent=1)
lines = ["| model | quant | decode tok/s | % of bandwidth floor | GB/s | prefill tok/s | TTFT ms | p50/p95 ms/token | "
         "dispatches/token | barriers/token | submits/token | load s | VRAM GiB |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
lines[0] = lines[0].replace("% of bandwidth floor", f"% of bandwidth floor ({ceiling:.0f} GB/s)")
for j in rows:
    lines.append(f"| {j['name']} | {j['quant_mode']} | {j['decode_tok_s']:.0f} | {j['pct_of_floor']:.0f}% "
                 f"(floor {j['floor_tok_s']:.0f}) | {j['achieved_gb_s']:.0f} | {j['prefill_tok_s']:.0f} | "
                 f"{j['ttft_ms']:.1f} | {j['decode_ms_per_token_p50']:.3f}/{j['decode_ms_per_token_p95']:.3f} | "
                 f"{j['dispatches_per_token']} | {j['barriers_per_token']} | {j['submits_per_token']:.4f} | "
                 f"{j['load_s']:.2f} | {j['vram_bytes']/2**30:.2f}"
                 + (f" (goal {j['vram_goal_bytes']/2**30:.2f}: {'met' if j['vram_bytes'] <= j['vram_goal_bytes'] else 'MISSED'})"
                    if "vram_goal_bytes" in j else "") + " |")
open(os.path.join(out, "matrix.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [f"{j['name']}\n{j['quant_mode']}" for j in rows]
    fig, ax = plt.subplots(figsize=(max(6, len(rows) * 1.2), 4))
    ax.bar(range(len(rows)), [j["decode_tok_s"] for j in rows], label="decode tok/s")
    ax.bar(range(len(rows)), [j["floor_tok_s"] - j["decode_tok_s"] for j in rows],
           bottom=[j["decode_tok_s"] for j in rows], alpha=0.3, label="bandwidth floor")
    for i, j in enumerate(rows):
        ax.text(i, j["decode_tok_s"], f"{j['pct_of_floor']:.0f}%", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylabel("tokens/s")
    ax.set_title(f"blueshift decode, batch 1, 512+128 tokens ({rows[0]['device'] if rows else ''})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "matrix.png"), dpi=120)
except ImportError:
    print("matplotlib not available: no chart")
