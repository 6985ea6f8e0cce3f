"""p50 and p99 of SQL requests and of HTTP calls of the empty procedure, one keep-alive
connection, each request as soon as the previous answer is read (Python's http.client: its own
overhead is in every figure, the same for both hosts)."""
import http.client, json, sys, time

port, calls, wasm_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("POST", "/v1/identity")
token = json.loads(c.getresponse().read())["token"]
auth = {"Authorization": "Bearer " + token}
c.request("PUT", "/v1/database/g", body=open(wasm_path, "rb").read(),
          headers=dict(auth, **{"Content-Type": "application/wasm"}))
published = c.getresponse()
published.read()
assert published.status in (200, 201), published.status

def measure(path, body, headers):
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        c.request("POST", path, body=body, headers=headers)
        response = c.getresponse()
        response.read()
        times.append(time.perf_counter() - start)
        assert response.status == 200, response.status
    times.sort()
    return times[len(times) // 2] * 1e6, times[int(len(times) * 0.99)] * 1e6

for name, path, body, headers in [
    ("sql", "/v1/database/g/sql", "SELECT * FROM graph_meta", auth),
    ("noop_procedure", "/v1/database/g/call/noop_procedure", "[]",
     dict(auth, **{"Content-Type": "application/json"})),
]:
    p50, p99 = measure(path, body, headers)
    print(f"{name} p50 {p50:.0f} us p99 {p99:.0f} us")
