#!/usr/bin/env bash
# Starts a throw-away PostgreSQL 15 server for the tests and exports LEASELAB_PG (a URL).
# Source it (". .ci/pg.sh"); pg_stop stops the server and removes its folder. PostgreSQL refuses
# to run as root, so the cluster belongs to the unprivileged postgres user, in a temporary
# folder: initdb, then pg_ctl start on 127.0.0.1 at a free port, with its socket in the same
# folder and fsync off (a test server's data need not survive a power cut). PG_EXTRA adds
# settings (-c name=value …) for a caller that needs more, such as .ci/contend-pg.sh.
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"

pg_free_port() {
  python3 - <<'PY' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {
  if [ ! -x "$PG_BIN/initdb" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    # A fresh machine without the server: Debian's package brings it (and the postgres user).
    echo "pg.sh: installing postgresql-15 with apt-get" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15; } >&2 || true
  fi
  if [ ! -x "$PG_BIN/initdb" ]; then
    echo "pg.sh: no PostgreSQL binaries in $PG_BIN" >&2
    return 3
  fi
  PG_DIR="$(mktemp -d /tmp/leaselab-pg.XXXXXX)"
  chmod 755 "$PG_DIR"
  [ "$(id -u)" = 0 ] && chown postgres: "$PG_DIR"
  PG_PORT="$(pg_free_port)"
  as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --no-locale >"$PG_DIR/initdb.log" 2>&1 ||
    { cat "$PG_DIR/initdb.log" >&2; return 3; }
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 ${PG_EXTRA:-}" \
    start >/dev/null || { cat "$PG_DIR/server.log" >&2; return 3; }
  export LEASELAB_PG="postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable"
  export PG_DIR PG_PORT
  echo "pg.sh: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT ($PG_DIR)"
}

# pg_stop: stops the server (waiting until it is down, so nothing writes into its folder any more),
# then removes the folder. A failure to tidy up is reported, never the caller's verdict: as an EXIT
# trap it keeps the exit code the script had.
pg_stop() {
  local rc=$?
  if [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR/data" ]; then
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w -t 30 stop >/dev/null 2>&1 ||
      echo "pg.sh: pg_ctl stop failed for $PG_DIR" >&2
    rm -rf "$PG_DIR" 2>/dev/null || echo "pg.sh: could not remove $PG_DIR" >&2
    PG_DIR=
  fi
  return $rc
}
