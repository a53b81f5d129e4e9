#!/usr/bin/env bash
# make soak: a bounded mixed load on a served database over loopback, then the figures.
#
# Generates SOAK_COUNT (200,000) Kyiv reports, serves them (loopback trusted as a proxy, so
# that X-Forwarded-For spreads the load over 100 clients), and runs wrk for a warm-up
# (SOAK_WARMUP, 60 s) and then SOAK_MINUTES (10) of the mix in scripts/soak/requests.py:
# 90% reads (clusters, tiles, report pages, searches) and 10% writes (filings and
# transitions) from 64 connections, paced to SOAK_RATE requests/s in all (600: about half
# of what this 2-core machine serves flat out, 1,263/s, so that latency is the server's
# and not a queue's). Beside it, 4 connections read only z14 clusters for their latency,
# some 100 a second.
# For the first 10 s a client of its own files as fast as it can, to be rate-limited on
# purpose. Goals: no error in the mix (the abuser's 429s aside), the server's memory
# after the soak within 10% of its memory after the warm-up, and z14 clusters p99 ≤ 50 ms.
# The server's memory is its anonymous resident memory (heap, index, caches) less SQLite's
# (its page caches, which fill as the database grows, up to 64 MiB a connection: reported
# beside it, from /metrics, the server counting it for the soak); its resident size also
# counts the pages of the database that SQLite maps, which the kernel reclaims at will.
# All three are reported, with a timeline every 30 s. Prints a Markdown section; exits non-zero when a goal is missed.
#
#   scripts/soak.sh BINARY   (SOAK_COUNT, SOAK_WARMUP, SOAK_MINUTES, SOAK_RATE may be set)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: scripts/soak.sh BINARY}
count=${SOAK_COUNT:-200000}
warmup=${SOAK_WARMUP:-60}
minutes=${SOAK_MINUTES:-10}
rate=${SOAK_RATE:-600}
command -v wrk >/dev/null || { echo "soak: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
work=.soak
mkdir -p "$work"
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true; }
trap cleanup EXIT

data="$work/kyiv-$count.geojsonl"
[ -f "$data" ] || "$bin" generate --count "$count" --seed 42 --distribution kyiv --out "$data" >/dev/null
rm -f "$work"/soak.sqlite*
"$bin" import "$data" --db "$work/soak.sqlite" >/dev/null 2>&1
password="soak password $RANDOM$RANDOM"
n=0
for role in inspector supervisor; do
    n=$((n + 1))
    echo "$password" | "$bin" user add --name "Soak $role" --email "soak-$role@example.org" --phone "050 000 01 0$n" --role "$role" --db "$work/soak.sqlite" >/dev/null
done
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
POSTERWATCH_SQLITE_MEMORY_STATS=1 "$bin" serve --db "$work/soak.sqlite" --port "$port" --trusted-proxy 127.0.0.1 --no-webhook-dispatch >"$work/serve.log" 2>&1 &
server=$!
base="http://127.0.0.1:$port"
for _ in $(seq 300); do curl -sf "$base/health" >/dev/null 2>&1 && break; sleep 0.2; done
token() {
    curl -sf "$base/v1/auth/login" -H 'Content-Type: application/json' \
        -d "{\"login\": \"soak-$1@example.org\", \"password\": \"$password\"}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])'
}
inspector=$(token inspector)
supervisor=$(token supervisor)
# Confirmed reports to move, 2,000 for the soak and 2,000 others for the warm-up.
curl -sf "$base/v1/reports?status=confirmed&limit=4000" | python3 -c 'import json, sys; print("\n".join(str(f["id"]) for f in json.load(sys.stdin)["features"]))' >"$work/confirmed.txt"
head -n 2000 "$work/confirmed.txt" >"$work/mix-ids.txt"
tail -n +2001 "$work/confirmed.txt" >"$work/warmup-ids.txt"
python3 scripts/soak/requests.py "$work/mix.lua" "$inspector" "$supervisor" "$work/mix-ids.txt" 2
python3 scripts/soak/requests.py "$work/warmup.lua" "$inspector" "$supervisor" "$work/warmup-ids.txt" 2
python3 - "$work/probe.lua" <<'PY'
import math, random, sys
rng = random.Random(7)
paths = []
for _ in range(2000):
    span_lon = 1280 / 256 * 360 / 2 ** 14
    span_lat = span_lon * 800 / 1280 * math.cos(math.radians(50.45))
    lon, lat = 30.5234 + rng.uniform(-3, 3) * span_lon / 2, 50.4501 + rng.uniform(-3, 3) * span_lat / 2
    paths.append(f"/v1/clusters?bbox={lon - span_lon / 2:.6f},{lat - span_lat / 2:.6f},{lon + span_lon / 2:.6f},{lat + span_lat / 2:.6f}&zoom=14")
with open(sys.argv[1], "w") as f:
    f.write("local paths = {" + ",".join('"' + p + '"' for p in paths) + "}\nlocal i = 0\n")
    f.write("request = function() i = i + 1; return wrk.format('GET', paths[(i % #paths) + 1]) end\n")
PY
cat >"$work/abuse.lua" <<LUA
local body = [==[{"longitude": 30.52, "latitude": 50.45, "address": "вул. Зловмисна, 1", "city": "Київ", "district": "pecherskyi", "object_type": "lighting_pole", "balance_holder": "kyivmiskvitlo", "phones": ["0670000001"]}]==]
request = function() return wrk.format("POST", "/v1/reports", {["Authorization"] = "Bearer $inspector", ["Content-Type"] = "application/json", ["X-Forwarded-For"] = "10.9.9.9"}, body) end
LUA

rss() { awk '/VmRSS/ { print $2 }' "/proc/$server/status"; }
anon() { awk '/RssAnon/ { print $2 }' "/proc/$server/status"; }
sqlite_kb() { curl -sf "$base/metrics" | awk '/^sqlite_heap_bytes/ { print int($2 / 1024) }'; }
health() { curl -sf "$base/health" | python3 -c "import json, sys; health = json.load(sys.stdin); print($1)"; }  # an expression of /health
reports() { health 'health["reports"]'; }
tiles_kb() { health 'health["tile_cache"]["bytes"] // 1024'; }
# Each of wrk's 64 connections waits this many ms before each request: 64 of them at
# 1 / (delay + latency) each make about $rate a second.
pace() { echo "delay = function() return $((64000 / rate)) end" >>"$1"; }
pace "$work/mix.lua"
pace "$work/warmup.lua"
echo "delay = function() return 40 end" >>"$work/probe.lua"  # 4 connections, some 100 a second
field() { sed -n "s|.*$1 *\([0-9.]*\).*|\1|p" "$2" | head -n 1; }
ms() {  # wrk's latency (e.g. 12.3ms, 1.2s, 800us) in milliseconds
    python3 -c 'import re, sys; v, u = re.match(r"([0-9.]+)(us|ms|s)", sys.argv[1]).groups(); print(round(float(v) * {"us": 0.001, "ms": 1, "s": 1000}[u], 2))' "$1"
}
non2xx() { sed -n 's/.*Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' "$1" | head -n 1; }
socket_errors() { sed -n 's/.*Socket errors: connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\), timeout \([0-9]*\).*/\1 \2 \3 \4/p' "$1" | awk '{ print $1 + $2 + $3 + $4 }'; }

echo "soak: warm-up, $warmup s" >&2
wrk -t2 -c64 -d"${warmup}s" --latency -s "$work/warmup.lua" "$base" >"$work/warmup.txt"
before=$(rss)
before_anon=$(anon)
before_sqlite=$(sqlite_kb)
before_own=$((before_anon - before_sqlite))
before_reports=$(reports)
echo "soak: $minutes min of the mix; memory after the warm-up: $((before_own / 1024)) MB its own, $((before_sqlite / 1024)) MB SQLite's, $((before / 1024)) MB resident" >&2
seconds=$((minutes * 60))
( for _ in $(seq $((seconds / 30))); do sleep 30; echo "$(anon) $(sqlite_kb) $(rss) $(tiles_kb)"; done ) >"$work/memory.txt" 2>/dev/null &
sampler=$!
wrk -t2 -c64 -d"${seconds}s" --latency -s "$work/mix.lua" "$base" >"$work/mix.txt" &
mix=$!
wrk -t1 -c4 -d"${seconds}s" --latency -s "$work/probe.lua" "$base" >"$work/probe.txt" &
probe=$!
wrk -t1 -c4 -d10s -s "$work/abuse.lua" "$base" >"$work/abuse.txt"
wait "$mix" "$probe"
kill "$sampler" 2>/dev/null || true
after=$(rss)
after_anon=$(anon)
after_sqlite=$(sqlite_kb)
after_own=$((after_anon - after_sqlite))
after_reports=$(reports)
timeline=$(awk '{ printf "%s%d/%d/%d/%.1f", (NR > 1 ? ", " : ""), ($1 - $2) / 1024, $2 / 1024, $3 / 1024, $4 / 1024 }' "$work/memory.txt")

mix_rate=$(field "Requests/sec:" "$work/mix.txt")
mix_errors=$(( $(non2xx "$work/mix.txt" || echo 0) + 0 ))
mix_socket=$(( $(socket_errors "$work/mix.txt" || echo 0) + 0 ))
probe_rate=$(field "Requests/sec:" "$work/probe.txt")
probe_p50=$(ms "$(awk '$1 == "50%" { print $2 }' "$work/probe.txt")")
probe_p99=$(ms "$(awk '$1 == "99%" { print $2 }' "$work/probe.txt")")
probe_errors=$(( $(non2xx "$work/probe.txt" || echo 0) + $(socket_errors "$work/probe.txt" || echo 0) + 0 ))
abuse_refused=$(( $(non2xx "$work/abuse.txt" || echo 0) + 0 ))
abuse_total=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$work/abuse.txt")
limited=$(curl -sf "$base/metrics" | awk -F' ' '/^rate_limit_refusals_total\{kind="write"\}/ { print $2 }')
growth=$(python3 -c "print(round(($after_own - $before_own) / $before_own * 100, 1))")
sqlite_growth=$(python3 -c "print(round(($after_sqlite - $before_sqlite) / $before_sqlite * 100, 1))")
resident_growth=$(python3 -c "print(round(($after - $before) / $before * 100, 1))")
reports_growth=$(python3 -c "print(round(($after_reports - $before_reports) / $before_reports * 100, 1))")

cat <<MD
### Soak: $minutes min of a mixed load (\`make soak\`, scripts/soak.sh)

$count generated Kyiv reports; wrk over loopback, 2 threads and 64 connections running the mix of
\`scripts/soak/requests.py\` (90% reads: z14 and z10 clusters, tiles, report pages, searches;
10% writes: 3% filings and 7% transitions) from 100 clients named in \`X-Forwarded-For\`, paced to
$rate requests/s, after a $warmup s warm-up at that pace; beside it 4 connections reading z14
clusters only (some 100 a second), and for the first 10 s a client filing as fast as it can. Server and wrk share
the 2 cores.

| what | measured | goal |
|---|---|---|
| the mix | $mix_rate requests/s, $mix_errors non-2xx/3xx answers, $mix_socket socket errors | 0 errors |
| z14 clusters beside it | $probe_rate requests/s, p50 $probe_p50 ms, p99 $probe_p99 ms, $probe_errors errors | p99 ≤ 50 ms |
| the abusive client | $abuse_refused of $abuse_total filings refused 429 (the server counted $limited) | refused, others unharmed |
| the server's own memory (anonymous resident, less SQLite's) | $((before_own / 1024)) MB after the warm-up, $((after_own / 1024)) MB after the soak ($growth%) | within 10% |
| SQLite's memory, its page caches (\`sqlite_heap_bytes\`) | $((before_sqlite / 1024)) MB after the warm-up, $((after_sqlite / 1024)) MB after the soak ($sqlite_growth%) | at most 64 MiB a connection |
| reports held (the index and the tallies grow with them) | $before_reports after the warm-up, $after_reports after the soak ($reports_growth%) | |
| its resident size, the mapped database included | $((before / 1024)) MB after the warm-up, $((after / 1024)) MB after the soak ($resident_growth%) | |

Every 30 s, own/SQLite's/resident MB and the tile cache's (part of its own): $timeline.
MD

ok=1
[ "$mix_errors" -eq 0 ] && [ "$mix_socket" -eq 0 ] && [ "$probe_errors" -eq 0 ] || { echo "soak: errors in the mix" >&2; ok=0; }
python3 -c "import sys; sys.exit(0 if $probe_p99 <= 50 else 1)" || { echo "soak: z14 clusters p99 $probe_p99 ms > 50 ms" >&2; ok=0; }
python3 -c "import sys; sys.exit(0 if abs($growth) <= 10 else 1)" || { echo "soak: memory grew $growth%" >&2; ok=0; }
[ "$abuse_refused" -gt 0 ] || { echo "soak: the abusive client was never refused" >&2; ok=0; }
[ "$ok" = 1 ]
