#!/usr/bin/env python3
"""The results table of benchmarks/peer/run_peer.sh: every NAME.QUANT.{blueshift,llama}.json pair in OUT_DIR
becomes a row (both engines' prefill tok/s, TTFT, decode tok/s and blueshift/llama.cpp ratios), written
to OUT_DIR/peer.md and OUT_DIR/peer.json.

    benchmarks/peer/peer_report.py OUT_DIR
"""
import json
import pathlib
import sys


def ratio(a, b):
    return a / b if a and b else None


def main():
    out = pathlib.Path(sys.argv[1])
    rows = []
    for bs_file in sorted(out.glob("*.blueshift.json")):
        stem = bs_file.name[: -len(".blueshift.json")]
        peer_file = out / f"{stem}.llama.json"
        if not peer_file.exists():
            continue
        name, quant = stem.rsplit(".", 1)
        b = json.loads(bs_file.read_text())
        p = json.loads(peer_file.read_text())
        rows.append({
            "model": name, "quant": quant,
            "prompt_tokens": b["prompt_tokens"], "gen_tokens": b["gen_tokens"], "reps": b["reps"],
            "device": b["device"], "llama_devices": p["devices"], "llama_flash_attn": p["flash_attn"],
            "blueshift": {k: b[k] for k in ("prefill_tok_s", "ttft_ms", "decode_tok_s")},
            "llama_cpp": {k: p[k] for k in ("prefill_tok_s", "ttft_ms", "decode_tok_s")},
            # > 1: blueshift is faster (for TTFT: llama.cpp's TTFT / blueshift's).
            "ratio": {"prefill": ratio(b["prefill_tok_s"], p["prefill_tok_s"]),
                      "ttft": ratio(p["ttft_ms"], b["ttft_ms"]),
                      "decode": ratio(b["decode_tok_s"], p["decode_tok_s"])},
            "blueshift_bandwidth": {k: b.get(k) for k in ("weight_bytes_per_token", "achieved_gb_s", "peak_gb_s",
                                                          "pct_of_peak", "peak_error", "floor_tok_s")},
            "llama_model_bytes": p.get("model_bytes"),
            "same_prompt_length": b["prompt_tokens"] == p["prompt_tokens"] and b["gen_tokens"] == p["gen_tokens"],
        })
    (out / "peer.json").write_text(json.dumps(rows, indent=2) + "\n")

    def f(x, digits=1):
        return "—" if x is None else f"{x:,.{digits}f}"

    lines = [
        "| model | quant | prefill tok/s blueshift | llama.cpp | × | TTFT ms blueshift | llama.cpp | × "
        "| decode tok/s blueshift | llama.cpp | × | blueshift % of peak (floor tok/s) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        b, p, x, bw = r["blueshift"], r["llama_cpp"], r["ratio"], r["blueshift_bandwidth"]
        pct = f(bw["pct_of_peak"]) + "%" + (" (peak error)" if bw["peak_error"] else "")
        lines.append(
            f"| {r['model']} | {r['quant']} | {f(b['prefill_tok_s'], 0)} | {f(p['prefill_tok_s'], 0)} | {f(x['prefill'], 2)} "
            f"| {f(b['ttft_ms'])} | {f(p['ttft_ms'])} | {f(x['ttft'], 2)} "
            f"| {f(b['decode_tok_s'])} | {f(p['decode_tok_s'])} | {f(x['decode'], 2)} "
            f"| {pct} ({f(bw['floor_tok_s'], 0)}) |")
    if rows:
        r = rows[0]
        lines += ["", f"{r['prompt_tokens']}-token prompt in one batch, then {r['gen_tokens']} greedy tokens, "
                      f"medians of {r['reps']}; × = blueshift / llama.cpp (TTFT: llama.cpp / blueshift), > 1 is blueshift "
                      f"ahead. blueshift on {r['device']}; llama.cpp on {r['llama_devices']}, flash attention "
                      f"{r['llama_flash_attn']}, all layers on the GPU."]
    (out / "peer.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
