"""Writes the Lua request lists of `make soak` (scripts/soak.sh): per wrk thread, a list of
pre-formatted requests in the soak's mix, so that wrk spends no Lua work per request.

90% reads: /v1/clusters at z14 (40%) and z10 (10%), tiles at z12-16 (15%), report pages
(15%), phone searches (10%); 10% writes: filings (3%) and transitions (7%, confirmed <->
removed: to removed in the first half of a list, back in the second). A report is moved
several times in its life (verifying, confirmed, blocked, removed), so moves outnumber
filings; and every filing grows what the server holds in memory (the cluster index, the
tallies), which a mix of filings alone confounds with a leak. Each request names one of 50
clients per thread in X-Forwarded-For (the server trusts loopback as its proxy), so the
rate limits see 100 clients, as behind a real proxy.

Usage: requests.py OUT.lua INSPECTOR_TOKEN SUPERVISOR_TOKEN IDS_FILE THREADS
(IDS_FILE: confirmed reports to move, 700 a thread at least; the warm-up is given others
than the soak, so that the soak's first moves find each report where they expect it.)
"""
import json
import math
import random
import sys

out, inspector, supervisor, ids_file, threads = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
ids = [int(line) for line in open(ids_file) if line.strip()]
rng = random.Random(20261125)
PER_LIST = 20_000
CENTER = (30.5234, 50.4501)


def viewport(zoom):
    # A 1280x800 px view around the centre of Kyiv, moved by up to a few views.
    span_lon = 1280 / 256 * 360 / 2 ** zoom
    span_lat = span_lon * 800 / 1280 * math.cos(math.radians(CENTER[1]))
    lon = CENTER[0] + rng.uniform(-3, 3) * span_lon / 2
    lat = CENTER[1] + rng.uniform(-3, 3) * span_lat / 2
    return f"{lon - span_lon / 2:.6f},{lat - span_lat / 2:.6f},{lon + span_lon / 2:.6f},{lat + span_lat / 2:.6f}"


def tile():
    zoom = rng.randint(12, 16)
    n = 2 ** zoom
    x = int((CENTER[0] + 180) / 360 * n) + rng.randint(-2, 2)
    lat = math.radians(CENTER[1])
    y = int((1 - math.log(math.tan(lat) + 1 / math.cos(lat)) / math.pi) / 2 * n) + rng.randint(-2, 2)
    return f"/v1/tiles/{zoom}/{x}/{y}.png"


def filing():
    return json.dumps({
        "longitude": round(CENTER[0] + rng.uniform(-0.15, 0.15), 6), "latitude": round(CENTER[1] + rng.uniform(-0.1, 0.1), 6),
        "address": f"вул. Навантажувальна, {rng.randint(1, 300)}", "city": "Київ", "district": "pecherskyi",
        "object_type": "lighting_pole", "balance_holder": "kyivmiskvitlo", "phones": [f"067{rng.randint(0, 9_999_999):07d}"],
    }, ensure_ascii=False)


def lua(text):
    return "[==[" + text + "]==]"


lists = []
for thread in range(threads):
    mine = ids[thread::threads]
    entries = []
    for k in range(PER_LIST):
        r = rng.random() * 100
        if r < 40:
            entries.append(("GET", f"/v1/clusters?bbox={viewport(14)}&zoom=14", None, None))
        elif r < 50:
            entries.append(("GET", f"/v1/clusters?bbox={viewport(10)}&zoom=10", None, None))
        elif r < 65:
            entries.append(("GET", tile(), None, None))
        elif r < 80:
            entries.append(("GET", f"/v1/reports?bbox={viewport(14)}&limit=100", None, None))
        elif r < 90:
            entries.append(("GET", f"/v1/search?q=067{rng.randint(0, 999):03d}&limit=50", None, None))
        elif r < 93:
            entries.append(("POST", "/v1/reports", filing(), inspector))
        else:
            entries.append(("MOVE", None, None, supervisor))
    # Transitions: the first half of the list moves reports to removed, the second half back.
    slots = [k for k, e in enumerate(entries) if e[0] == "MOVE"]
    if len(slots) % 2:  # an odd one out would move a report back that is already back (409)
        entries[slots.pop()] = ("POST", "/v1/reports", filing(), inspector)
    half = len(slots) // 2
    for n, k in enumerate(slots):
        report = mine[(n % half) % len(mine)] if half else mine[0]
        to = "removed" if n < half else "confirmed"
        entries[k] = ("POST", f"/v1/reports/{report}/transitions", json.dumps({"to": to}), supervisor)
    formatted = []
    for k, (method, path, body, token) in enumerate(entries):
        client = f"10.0.{thread}.{k % 50 + 1}"
        formatted.append("{" + ", ".join([lua(method), lua(path), lua(body) if body else "nil", lua(token) if token else "nil", lua(client)]) + "}")
    lists.append("{" + ",\n".join(formatted) + "}")

with open(out, "w") as f:
    f.write("local lists = {" + ",\n".join(lists) + "}\n")
    f.write("""
local requests = {}
local i = 0
local threads = 0
setup = function(thread)
  thread:set("list", threads % #lists + 1)
  thread:set("first", threads == 0)
  threads = threads + 1
end
-- wrk calls the first thread's request() once before the run, to look for pipelining,
-- and never sends what it returns: that thread starts a step back.
init = function(args)
  if first then i = -1 end
  for k, r in ipairs(lists[list or 1]) do
    local headers = {["X-Forwarded-For"] = r[5]}
    if r[4] then headers["Authorization"] = "Bearer " .. r[4] end
    if r[3] then headers["Content-Type"] = "application/json" end
    requests[k] = wrk.format(r[1], r[2], headers, r[3])
  end
end
request = function()
  i = i + 1
  return requests[(math.max(i - 1, 0) % #requests) + 1]
end
""")
