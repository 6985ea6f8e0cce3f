#!/usr/bin/env python3
"""Per-run totals of procedure answers (one JSON answer per line): transactions, those over
5 ms, the longest, and the server time."""
import json, sys
for f in sys.argv[1:]:
    tot = slow = q = mx = total = 0
    for line in open(f):
        line = line.strip()
        if not line:
            continue
        a = json.loads(line)
        if a[0] != 0:
            continue
        st = a[1][-1]
        q += 1; tot += st[0]; slow += st[4]; mx = max(mx, st[2]); total += st[5]
    print(f"{f:28} {q:4} queries {tot:6} transactions {slow:4} over 5 ms ({slow / tot:.2%}), "
          f"longest {mx / 1000:.1f} ms, server time {total / 1e6:.1f} s")
