"""Calls one procedure N times over HTTP on one keep-alive connection (results/call-costs/run.sh)."""
import http.client, sys
listen, token, name, args, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
host, port = listen.split(':')
c = http.client.HTTPConnection(host, int(port))
h = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
for i in range(n):
    c.request("POST", f"/v1/database/graph/call/{name}", body=args, headers=h)
    r = c.getresponse(); body = r.read()
    if r.status != 200: raise SystemExit(f"{name}: {r.status} {body[:300]}")
