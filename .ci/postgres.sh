#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the store tests and print its URL on stdout.
# Installs the server from Debian's packages when it is missing. The server listens on
# 127.0.0.1:${PLANNER_PG_PORT:-54329} with trust authentication, data under /tmp.
set -euo pipefail
port="${PLANNER_PG_PORT:-54329}"
data="/tmp/planner-pg-$port"
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "installing postgresql from the distribution's packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
fi
id postgres >/dev/null 2>&1 || useradd --system --home /tmp postgres
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if as_pg "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
  as_pg "$bindir/pg_ctl" -D "$data" -m immediate stop >&2 || true
fi
rm -rf "$data"
mkdir -p "$data"
[ "$(id -u)" = 0 ] && chown postgres "$data"
as_pg "$bindir/initdb" -D "$data" -A trust -U postgres -E UTF8 >/dev/null
as_pg "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w \
  -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c fsync=off" start >&2
as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres planner_test
echo "postgresql+psycopg://postgres@127.0.0.1:$port/planner_test"
