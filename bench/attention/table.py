"""table.py RESULTS.jsonl SDPA.jsonl — the attention table: per shape, TFLOP/s of the
baseline, of each fused-kernel point and of SDPA's backends, and % of 989 TFLOP/s."""
import json
import sys

PEAK = 989.0


def main():
    res = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    sdpa = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
    print("%-6s %-52s %10s %9s %7s %s" % ("size", "what", "us", "TFLOP/s", "%peak", "status"))
    for size in ("tiny", "short", "small", "large"):
        for r in res:
            if r["workload"] != "attention" or r["size"] != size:
                continue
            med = r.get("latency_us", {}).get("median")
            pt = " ".join("%s=%s" % kv for kv in sorted(r["point"].items())) or "(seed's own directive)"
            what = r["variant"] + (" " + pt if r["variant"] == "seed" else "")
            if med and r.get("flops"):
                tf = r["flops"] / med / 1e6
                print("%-6s %-52s %10.1f %9.1f %7.1f %s" % (size, what[:52], med, tf, 100 * tf / PEAK, r["status"]))
            else:
                print("%-6s %-52s %10s %9s %7s %s" % (size, what[:52], "-", "-", "-", r["status"]))
        for s in sdpa:
            if s.get("size") == size and "us" in s:
                print("%-6s %-52s %10.1f %9.1f %7.1f" % (size, "sdpa " + s["backend"], s["us"], s["tflops"],
                      100 * s["tflops"] / PEAK))
    for s in sdpa:
        if s["what"].startswith("gemm"):
            print("%-6s %-52s %10.1f %9.1f %7.1f" % ("-", s["what"], s["us"], s["tflops"], 100 * s["tflops"] / PEAK))


if __name__ == "__main__":
    main()
