#!/usr/bin/env python3
"""Per-transaction cost fit from 'txcost HOLD VERTICES ARCS LOOKUPS' log lines (cumulative work
per query): hold = a*vertices + b*arcs + c*lookups + d."""
import json, re, sys
txs = []
prev = None
for line in open(sys.argv[1]):
    try:
        msg = json.loads(line)["message"]
    except Exception:
        continue
    m = re.match(r"txcost (\d+) (\d+) (\d+) (\d+)", msg)
    if not m:
        continue
    hold, v, a, l = map(int, m.groups())
    if prev is None or v < prev[0] or a < prev[1]:
        prev = (0, 0, 0)  # a new query
    dv, da, dl = v - prev[0], a - prev[1], l - prev[2]
    prev = (v, a, l)
    txs.append(([dv, da, dl, 1], hold))

def solve(rows, k):
    M = [[sum(x[i] * x[j] for x, _ in rows) for j in range(k)] + [sum(x[i] * y for x, y in rows)] for i in range(k)]
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(M[r][c]))
        M[c], M[p] = M[p], M[c]
        for r in range(k):
            if r != c:
                f = M[r][c] / M[c][c]
                M[r] = [x - f * y for x, y in zip(M[r], M[c])]
    return [M[i][k] / M[i][i] if M[i][i] else 0.0 for i in range(k)]

def r2(rows, pred):
    ys = [y for _, y in rows]
    mean = sum(ys) / len(ys)
    return 1 - sum((y - p) ** 2 for y, p in zip(ys, pred)) / sum((y - mean) ** 2 for y in ys)

print(f"{len(txs)} transactions; holds: p50 {sorted(h for _, h in txs)[len(txs)//2]} µs, max {max(h for _, h in txs)} µs, over 5 ms: {sum(h > 5000 for _, h in txs)}")
rows = [([x[0], x[1], x[3]], y) for x, y in txs]
a, b, d = solve(rows, 3)
print(f"fit: {a:.2f} µs per vertex expanded, {b:.3f} µs per arc, {d:.0f} µs per transaction; "
      f"a vertex costs {a / b:.1f} arcs; R² {r2(rows, [a*x[0]+b*x[1]+d*x[2] for x, _ in rows]):.3f}")
u = [([x[0] + x[1] + x[2]], y) for x, y in txs]
(k,) = solve(u, 1)
print(f"current units (vertex = arc = lookup = 1): {k:.3f} µs per unit; R² {r2(u, [k*x[0] for x, _ in u]):.3f}")
# cost per unit spread, current units vs weighted
import statistics
for name, w in [("current", 1.0), ("weighted", a / b)]:
    per = [y / (x[1] + w * x[0] + x[2]) for x, y in txs if x[1] + x[0] > 200]
    per.sort()
    q = lambda p: per[int(p * (len(per) - 1))]
    print(f"{name:9} µs per unit: p10 {q(0.1):.3f} p50 {q(0.5):.3f} p90 {q(0.9):.3f} p99 {q(0.99):.3f}  p99/p50 {q(0.99)/q(0.5):.2f}")
