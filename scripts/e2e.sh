#!/usr/bin/env bash
# make e2e: serves the sample data, opens the map page in headless Chromium, checks that
# tiles load, that "search in this area" finds markers and that a phone search lists
# results (and says plainly when nothing is found), then saves a screenshot. Then the web
# client: an inspector registers, files a report with a photo (a bad phone first: its
# error beside the field) and sees it on the map; a supervisor signs in, moves it to
# confirmed, is refused blocking its phone before verifying it, verifies and blocks it,
# and sees the report become phone_blocked on the map; the supervisor assigns three reports
# of an area to an inspector, who checks them in order and marks one removed. A screenshot
# of each.
#
#   scripts/e2e.sh BINARY SAMPLE SCREENSHOT
set -euo pipefail
binary=$1 sample=$2 screenshot=$3
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "e2e: chromium is not installed (apt-get install chromium)" >&2; exit 1; }

work=$(mktemp -d)
server=""
# The server saves its index as it stops: wait for it before the directory goes.
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

"$binary" import "$sample" --db "$work/e2e.sqlite" >/dev/null 2>&1

# A free port: the first of a few random ones that nothing answers on.
for _ in $(seq 20); do
  port=$(( 20000 + RANDOM % 40000 ))
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
done
"$binary" serve --db "$work/e2e.sqlite" --port "$port" --page-self-tests >"$work/server.log" 2>&1 &
server=$!
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -fsS "$base/health" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$base/health" >/dev/null || { echo "e2e: the server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }

browse() {
  "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars --no-first-run \
    --user-data-dir="$work/chromium" --window-size=1280,800 --virtual-time-budget=20000 "$@" 2>>"$work/chromium.log"
}

# The page tests itself when asked (?selftest=1) and writes the outcome into #selftest.
url="$base/?selftest=1&q=067"
outcome=$(browse --dump-dom "$url" | sed -n 's/.*<pre id="selftest"[^>]*>\(.*\)<\/pre>.*/\1/p')
echo "e2e: $outcome"
tiles=$(grep -c 'route=/v1/tiles/{z}' "$work/server.log" || true)
echo "e2e: the server answered $tiles tile requests"
[ "$tiles" -gt 0 ] || outcome="no tile was requested"
case "$outcome" in
  *'"ok":true'*) ;;
  *) echo "e2e: FAILED (page outcome above; server log: $work/server.log)" >&2; tail -20 "$work/chromium.log" >&2; exit 1 ;;
esac

mkdir -p "$(dirname "$screenshot")"
case $screenshot in /*) shot=$screenshot ;; *) shot=$PWD/$screenshot ;; esac
browse --screenshot="$shot" "$url" >/dev/null
[ -s "$screenshot" ] || { echo "e2e: no screenshot was written" >&2; exit 1; }

# The web client's two flows. The supervisor's account comes from the command line; its
# credentials ride in the URL's fragment, which the browser never sends to the server.
dir=$(dirname "$shot")
flow() {  # flow URL NAME: runs a self-test flow, prints its outcome, fails unless ok
  local outcome
  outcome=$(browse --dump-dom "$1" | sed -n 's/.*<pre id="selftest"[^>]*>\(.*\)<\/pre>.*/\1/p')
  echo "e2e $2: $outcome" >&2
  case "$outcome" in
    *'"ok":true'*) echo "$outcome" ;;
    *) echo "e2e: the $2 flow FAILED (server log: $work/server.log)" >&2; tail -20 "$work/chromium.log" >&2; exit 1 ;;
  esac
}
inspector=$(flow "$base/?selftest=inspector" inspector)
report=$(echo "$inspector" | sed -n 's/.*"reportID":\([0-9]*\).*/\1/p')
password="e2e supervisor $RANDOM$RANDOM"
echo "$password" | "$binary" user add --name "Наглядач e2e" --email supervisor@example.org --phone "050 000 00 77" --role supervisor \
  --db "$work/e2e.sqlite" >/dev/null
supervisor_url="$base/?selftest=supervisor#login=supervisor@example.org&password=${password// /%20}&report=$report"
flow "$supervisor_url" supervisor >/dev/null
# Assignments: the supervisor assigns three reports shown in an area to an inspector, who
# sees them in "My checks", reorders them and marks one removed.
checker_password="e2e inspector $RANDOM$RANDOM"
echo "$checker_password" | "$binary" user add --name "Перевіряльник e2e" --email checker@example.org --phone "050 000 00 78" --role inspector \
  --db "$work/e2e.sqlite" >/dev/null
assignments_url="$base/?selftest=assignments#login=supervisor@example.org&password=${password// /%20}&inspector=Перевіряльник&inspector_login=checker@example.org&inspector_password=${checker_password// /%20}"
flow "$assignments_url" assignments >/dev/null
browse --screenshot="$dir/inspector.png" "$base/?selftest=inspector" >/dev/null
browse --screenshot="$dir/supervisor.png" "$supervisor_url" >/dev/null
browse --screenshot="$dir/assignments.png" "$assignments_url" >/dev/null
for f in inspector supervisor assignments; do [ -s "$dir/$f.png" ] || { echo "e2e: no $f screenshot was written" >&2; exit 1; }; done
for secret in "$password" "$checker_password"; do
  if grep -q "$secret" "$work/server.log"; then echo "e2e: a password reached the server's log" >&2; exit 1; fi
done
echo "e2e: passed; screenshots in $screenshot, $dir/inspector.png, $dir/supervisor.png and $dir/assignments.png"
