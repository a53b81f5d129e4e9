#!/usr/bin/env bash
# Fuzzes the HTTP API with schemathesis against its own /openapi.json: a fresh database
# from the shipped sample, `posterwatch serve` on a free loopback port, every operation
# with positive and negative cases and every check (scripts/schemathesis/). Exits non-zero
# on any failure. Usage: scripts/api-fuzz.sh BINARY [MAX_EXAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: scripts/api-fuzz.sh BINARY [MAX_EXAMPLES]}
examples=${2:-25}
work=$(mktemp -d)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

"$bin" import data/sample-reports.geojsonl --db "$work/api.sqlite" >/dev/null 2>&1
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Webhooks are registered but not sent: the fuzzer's URLs name hosts anywhere.
"$bin" serve --db "$work/api.sqlite" --port "$port" --no-webhook-dispatch >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    sleep 0.1
done

# An administrator (the highest role), signed in before the run without a token fails
# enough logins from this address to be throttled.
password="fuzzing password $RANDOM$RANDOM"
echo "$password" | "$bin" user add --name Fuzz --email fuzz@example.org --phone "050 000 00 99" --role admin --db "$work/api.sqlite" >/dev/null
token=$(curl -sf "http://127.0.0.1:$port/v1/auth/login" -H 'Content-Type: application/json' \
    -d "{\"login\": \"fuzz@example.org\", \"password\": \"$password\"}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])')

export HYPOTHESIS_STORAGE_DIRECTORY="$work/hypothesis"
status=0
# The change stream (Server-Sent Events) never ends an answer on its own: its tests read it
# on a socket (ChangeStreamTests) instead.
stream=(--exclude-name "GET /v1/changes/stream")
echo "api-fuzz: without a token" >&2
schemathesis --config-file scripts/schemathesis/schemathesis.toml run "http://127.0.0.1:$port/openapi.json" \
    --max-examples "$examples" --no-color "${stream[@]}" || status=$?

# Again as the administrator, so that every operation that needs a role is fuzzed past
# its 401. Left out: those that would end the token's own session.
echo "api-fuzz: as an administrator" >&2
schemathesis --config-file scripts/schemathesis/schemathesis.toml run "http://127.0.0.1:$port/openapi.json" \
    --max-examples "$examples" --no-color -H "Authorization: Bearer $token" "${stream[@]}" \
    --exclude-name "POST /v1/auth/logout" --exclude-name "POST /v1/me/password" --exclude-name "DELETE /v1/me/sessions/{id}" || status=$?
if ! kill -0 "$server" 2>/dev/null; then
    echo "api-fuzz: the server stopped during the run:" >&2
    cat "$work/serve.log" >&2
    status=1
fi
exit $status
