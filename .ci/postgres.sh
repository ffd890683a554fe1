#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the store tests and print its URL on stdout.
#
#   bash .ci/postgres.sh [DATA_DIR]        start; prints the URL (last line of stdout)
#   bash .ci/postgres.sh stop DATA_DIR     stop the server started with that folder
#
# The server gets a private data folder (a new temporary one unless DATA_DIR is given) and a
# free port on 127.0.0.1 (PLANNER_PG_PORT to choose one), trust authentication. It never touches
# a server or a folder it did not create, so concurrent test runs on one machine do not collide.
# Installs the server from Debian's packages when it is missing.
set -euo pipefail
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

if [ "${1:-}" = stop ]; then
  data="${2:?usage: postgres.sh stop DATA_DIR}"
  [ -f "$data/PG_VERSION" ] || { echo "not a PostgreSQL data folder: $data" >&2; exit 1; }
  as_pg "$bindir/pg_ctl" -D "$data" -m fast -w stop >&2 || true
  rm -rf "$data"
  exit 0
fi

if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "installing postgresql from the distribution's packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
fi
id postgres >/dev/null 2>&1 || useradd --system --home /tmp postgres
port="${PLANNER_PG_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
data="${1:-$(mktemp -d /tmp/planner-pg.XXXXXX)}"
mkdir -p "$data"
[ "$(id -u)" = 0 ] && chown postgres "$data"
as_pg "$bindir/initdb" -D "$data" -A trust -U postgres -E UTF8 >/dev/null
as_pg "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w \
  -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c fsync=off" start >&2
as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres planner_test
echo "PLANNER_PG_DATA=$data" >&2
echo "postgresql+psycopg://postgres@127.0.0.1:$port/planner_test"
