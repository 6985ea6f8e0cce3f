import http.client, json, statistics, time, sys
tok = sys.argv[1]
c = http.client.HTTPConnection("127.0.0.1", 3414)
def call(db, f, args):
    c.request("POST", f"/v1/database/{db}/call/{f}", json.dumps(args), {"Authorization": "Bearer "+tok, "Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    return int(r.getheader("spacetime-execution-duration-micros") or -1)
for f, a in [("noop_procedure", []), ("neighbor_count", [1, "both", [], []]), ("neighbor_count", [1, "out", [], []]), ("bfs", [1, "both", [], [], {"some": 2}, 0, 0, 0])]:
    xs = {"a": [], "b": []}
    for i in range(2000):
        for db in ("a", "b") if i % 2 else ("b", "a"):
            xs[db].append(call(db, f, a)); time.sleep(0.001)
    print(f, a[1:2], "old p50/mean", statistics.median(xs["a"][200:]), round(statistics.mean(xs["a"][200:]),1), "new p50/mean", statistics.median(xs["b"][200:]), round(statistics.mean(xs["b"][200:]),1))
