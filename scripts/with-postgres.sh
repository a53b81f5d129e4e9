#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL 15 cluster with PostGIS 3 and pg_trgm:
# initialised in a temporary directory, listening on a free loopback port, stopped and
# removed when the command ends, whatever its outcome. The command sees the database's URL
# in POSTERWATCH_TEST_POSTGRES (a database `posterwatch_test` with both extensions, which
# tests copy as a template).
#
#   scripts/with-postgres.sh swift test
#
# A missing PostgreSQL is an error, never a skip: make test installs it (TEST_APT_PACKAGES).
# The cluster runs with fsync off: it holds nothing worth keeping (POSTERWATCH_PG_DURABLE=1
# keeps PostgreSQL's defaults, for benchmarks).
set -euo pipefail

bin=/usr/lib/postgresql/15/bin
if [ ! -x "$bin/initdb" ] || [ ! -f /usr/share/postgresql/15/extension/postgis.control ]; then
	echo "with-postgres: PostgreSQL 15 with PostGIS 3 is not installed (make test-deps installs postgresql-15 and postgresql-15-postgis-3)" >&2
	exit 1
fi

dir=$(mktemp -d /tmp/posterwatch-postgres.XXXXXX)
# PostgreSQL refuses to run as root: root runs it as the postgres user, who owns the folder.
as_owner() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
stop() {
	as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap stop EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_owner "$bin/initdb" -D "$dir/data" -U posterwatch -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
	|| { cat "$dir/initdb.log" >&2; exit 1; }
# Tests need no durability; a benchmark (POSTERWATCH_PG_DURABLE=1) measures PostgreSQL as a
# city runs it: fsync and synchronous commits on, with memory for a million reports.
settings="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
if [ "${POSTERWATCH_PG_DURABLE:-0}" = 1 ]; then
	settings="-c shared_buffers=1GB -c maintenance_work_mem=512MB -c max_wal_size=4GB"
fi
as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
	-o "-p $port -k $dir -c listen_addresses=127.0.0.1 $settings -c max_connections=200" \
	start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }

psql_on() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U posterwatch "$@"; }
psql_on -d postgres -c "CREATE DATABASE posterwatch_test"
psql_on -d posterwatch_test -c "CREATE EXTENSION postgis; CREATE EXTENSION pg_trgm"

export POSTERWATCH_TEST_POSTGRES="postgres://posterwatch@127.0.0.1:$port/posterwatch_test"
echo "with-postgres: PostgreSQL $(psql_on -d posterwatch_test -At -c 'SHOW server_version') with PostGIS $(psql_on -d posterwatch_test -At -c 'SELECT postgis_lib_version()') on 127.0.0.1:$port" >&2
"$@"
