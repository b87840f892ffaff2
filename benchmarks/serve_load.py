#!/usr/bin/env python3
"""Load test of `blueshift serve` (or any OpenAI-compatible server) on the loopback: REQUESTS streaming chat
completions, CONCURRENCY at a time, each its own prompt. Prints one JSON line: failures, latency p50/p95
(request to [DONE]), time to first token p50/p95, generated tokens (from each stream's usage) and tokens/s
over the whole run. Exit 1 if any request failed.

  benchmarks/serve_load.py http://127.0.0.1:8080 --requests 200 --concurrency 16 --max-tokens 128

--trace N adds, for the first N requests, each content chunk's arrival time (ms after the request) and length:
whether text streams or arrives at once. --per-request adds every request's [index, latency ms, client TTFT ms,
server queued ms, server prompt ms] in the order they finished: which requests a tail comes from.

The client's TTFT is the first chunk with text, which a random-weight model may send late (its tokens are often
incomplete UTF-8 that the server holds back). server_ttft_ms_p50/p95 come from the server's own times instead (the
last chunk's "timings": queued_ms + prompt_ms, the first token sampled), where the server sends them.
"""
import argparse
import http.client
import json
import sys
import threading
import time
import urllib.parse


def one(url, body, timeout, trace=None):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    t0 = time.monotonic()
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:200]!r}")
    ttft, usage, timings, done = None, None, None, False
    while True:
        line = resp.readline()
        if not line:
            break
        if not line.startswith(b"data: "):
            continue
        data = line[6:].strip()
        if data == b"[DONE]":
            done = True
            break
        chunk = json.loads(data)
        if "error" in chunk:
            raise RuntimeError(chunk["error"]["message"])
        delta = chunk["choices"][0]["delta"]
        if ttft is None and delta.get("content"):
            ttft = time.monotonic() - t0
        if trace is not None and delta.get("content"):
            trace.append([round((time.monotonic() - t0) * 1e3, 2), len(delta["content"])])
        if chunk.get("usage"):
            usage = chunk["usage"]
        if chunk.get("timings"):
            timings = chunk["timings"]
    conn.close()
    if not done or usage is None:
        raise RuntimeError("stream ended without usage and [DONE]")
    server_ttft = timings["queued_ms"] + timings["prompt_ms"] if timings else None
    return (time.monotonic() - t0, ttft if ttft is not None else time.monotonic() - t0, usage["completion_tokens"],
            server_ttft, timings)


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))] if v else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    ap.add_argument("--label", default="")
    ap.add_argument("--trace", type=int, default=0,
                    help="for the first N requests, list each content chunk's arrival (ms after the request) and length")
    ap.add_argument("--per-request", action="store_true",
                    help="list every request's index, latency, client TTFT and server queued / prompt ms")
    a = ap.parse_args()
    lat, ttft, tokens, errors, server_ttft, each = [], [], [], [], [], []
    traces = {}
    lock = threading.Lock()
    nxt = [0]

    def worker():
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= a.requests:
                return
            body = {"messages": [{"role": "user", "content": f"request {i}: tell me something about the number {i * 37}"}],
                    "max_tokens": a.max_tokens, "temperature": 0.8, "seed": i, "stream": True, "ignore_eos": True}
            try:
                trace = [] if i < a.trace else None
                l, t, n, st, tm = one(a.url, body, a.timeout, trace)
                if trace is not None:
                    with lock:
                        traces[i] = trace
                with lock:
                    lat.append(l), ttft.append(t), tokens.append(n)
                    if st is not None:
                        server_ttft.append(st)
                    each.append([i, round(l * 1e3, 1), round(t * 1e3, 1), round(tm["queued_ms"], 1) if tm else None,
                                 round(tm["prompt_ms"], 1) if tm else None])
            except Exception as e:  # noqa: BLE001 - every failure is counted and the first few shown
                with lock:
                    errors.append(str(e))

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(a.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    out = {"label": a.label, "requests": a.requests, "concurrency": a.concurrency, "max_tokens": a.max_tokens,
           "failures": len(errors), "wall_s": round(wall, 2),
           "latency_ms_p50": round(pct(lat, 0.5) * 1e3, 1), "latency_ms_p95": round(pct(lat, 0.95) * 1e3, 1),
           "ttft_ms_p50": round(pct(ttft, 0.5) * 1e3, 1), "ttft_ms_p95": round(pct(ttft, 0.95) * 1e3, 1),
           "server_ttft_ms_p50": round(pct(server_ttft, 0.5), 1) if server_ttft else None,
           "server_ttft_ms_p95": round(pct(server_ttft, 0.95), 1) if server_ttft else None,
           "generated_tokens": sum(tokens), "tok_s": round(sum(tokens) / wall, 1) if wall > 0 else 0,
           "first_errors": errors[:3]}
    if a.trace:
        out["chunk_ms_and_chars"] = {str(i): traces[i] for i in sorted(traces)}
    if a.per_request:
        out["per_request"] = each
    print(json.dumps(out))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
