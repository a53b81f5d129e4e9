#!/usr/bin/env bash
# Fuzzes the HTTP API with schemathesis against its own /openapi.json: a fresh database
# from the shipped sample, `posterwatch serve` on a free loopback port, every operation
# with positive and negative cases and every check (scripts/schemathesis/), without a
# token, as an administrator, and (with a quarter of the examples) as an inspector, a
# supervisor and an integration's API key. Exits non-zero on any failure. Usage: scripts/api-fuzz.sh BINARY [MAX_EXAMPLES]
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

# An account of each role, signed in before the run without a token fails enough logins
# from this address to be throttled; each run takes a fresh access token by refreshing
# (a token lives 15 minutes, a run may take longer), waiting out the rate limit that the
# runs' own sign-ins use up. And an integration's API key.
password="fuzzing password $RANDOM$RANDOM"
n=0
for role in admin inspector supervisor; do
    n=$((n + 1))
    echo "$password" | "$bin" user add --name "Fuzz $role" --email "fuzz-$role@example.org" --phone "050 000 00 9$n" --role "$role" --db "$work/api.sqlite" >/dev/null
    curl -sf "http://127.0.0.1:$port/v1/auth/login" -H 'Content-Type: application/json' \
        -d "{\"login\": \"fuzz-$role@example.org\", \"password\": \"$password\"}" >"$work/tokens-$role.json"
done
bearer() {  # ROLE: a fresh access token of that role's account
    local answer
    for _ in $(seq 60); do
        if answer=$(curl -sf "http://127.0.0.1:$port/v1/auth/refresh" -H 'Content-Type: application/json' \
            -d "{\"refresh_token\": \"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["refresh_token"])' "$work/tokens-$1.json")\"}"); then
            echo "$answer" >"$work/tokens-$1.json"
            python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["access_token"])' "$work/tokens-$1.json"
            return
        fi
        sleep 3
    done
    echo "api-fuzz: no fresh token for $1" >&2
    return 1
}
integration=$("$bin" apikey create --name fuzz --db "$work/api.sqlite" | grep -o 'pwk_[A-Za-z0-9_-]*' | head -n 1)

export HYPOTHESIS_STORAGE_DIRECTORY="$work/hypothesis"
status=0
# The change stream (Server-Sent Events) never ends an answer on its own: its tests read it
# on a socket (ChangeStreamTests) instead.
stream=(--exclude-name "GET /v1/changes/stream")
echo "api-fuzz: without a token" >&2
schemathesis --config-file scripts/schemathesis/schemathesis.toml run "http://127.0.0.1:$port/openapi.json" \
    --max-examples "$examples" --no-color "${stream[@]}" || status=$?

# Then, with a quarter of the examples, as an inspector, a supervisor and an integration's
# key, whose refusals (403) the document states too; last as the administrator, so that
# every operation that needs a role is fuzzed past its 401 and 403 (last, as it may
# disable the other accounts). Left out: those that would end the token's own session.
own_session=(--exclude-name "POST /v1/auth/logout" --exclude-name "POST /v1/me/password" --exclude-name "DELETE /v1/me/sessions/{id}")
for role in inspector supervisor integration admin; do
    echo "api-fuzz: as the $role" >&2
    credential=$([ "$role" = integration ] && echo "$integration" || bearer "$role")
    count=$([ "$role" = admin ] && echo "$examples" || echo "$(( (examples + 3) / 4 ))")
    schemathesis --config-file scripts/schemathesis/schemathesis.toml run "http://127.0.0.1:$port/openapi.json" \
        --max-examples "$count" --no-color -H "Authorization: Bearer $credential" "${stream[@]}" "${own_session[@]}" || status=$?
done
if ! kill -0 "$server" 2>/dev/null; then
    echo "api-fuzz: the server stopped during the run:" >&2
    cat "$work/serve.log" >&2
    status=1
fi
exit $status
