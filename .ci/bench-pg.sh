#!/usr/bin/env bash
# Issue 22's table: BenchmarkVersusRiver on two PostgreSQL 15 servers of its own, one that syncs
# its commits (fsync, synchronous_commit and full_page_writes on: the default) and one that does
# not (as .ci/pg.sh's test server), both with pg_stat_statements; pgbench's raw rate (a one-row
# autocommit UPDATE, 1 and 16 clients) on each as the ceiling; PASSES passes that alternate the
# two servers, so that both see the machine's load of the moment, with the load average
# (uptime) before each. Prints the medians per variant and server, issue 34's targets (the
# hosted worker against River doing no work, and against River doing the same writes its own
# way, River at its default and at its fastest fetch settings), and keeps the raw output.
# Issue 34 asks for runs of 20,000 messages (N=20000): about 10 minutes a server a pass, since a
# River at its default settings with 16 slots works about 155 messages a second.
#
# Not run by CI (CI runs the benchmarks once each, -benchtime 1x, as a smoke test). By hand:
#     bash .ci/bench-pg.sh                  # 3 passes of 2,000 messages: about 10 minutes
#     PASSES=5 N=3000 bash .ci/bench-pg.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
PASSES="${PASSES:-3}"
N="${N:-2000}"
BENCH="${BENCH:-VersusRiver}"
. .ci/pg.sh # for PG_BIN, as_pg and pg_free_port

out="$(mktemp -d /tmp/leaselab-bench-pg.XXXXXX)"
chmod 755 "$out"
declare -A DIR PORT
stop_all() {
  for s in "${!DIR[@]}"; do
    as_pg "$PG_BIN/pg_ctl" -D "${DIR[$s]}/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
    rm -rf "${DIR[$s]}"
  done
}
trap stop_all EXIT

# start NAME SETTINGS…: a server of its own in a temporary folder.
start() {
  local name=$1
  shift
  local dir
  dir="$(mktemp -d /tmp/leaselab-bench-pg-"$name".XXXXXX)"
  chmod 755 "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  local port
  port="$(pg_free_port)"
  as_pg "$PG_BIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1
  as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c shared_preload_libraries=pg_stat_statements $*" \
    start >/dev/null
  DIR[$name]=$dir
  PORT[$name]=$port
  psql_on "$name" -q -c 'CREATE EXTENSION pg_stat_statements' \
    -c 'CREATE TABLE pgb (id int PRIMARY KEY, v int NOT NULL) WITH (fillfactor = 80)' \
    -c 'INSERT INTO pgb SELECT i, 0 FROM generate_series(1, 10000) i' -c 'ANALYZE pgb'
}
psql_on() {
  local name=$1
  shift
  "$PG_BIN/psql" -h 127.0.0.1 -p "${PORT[$name]}" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"
}
url_of() { echo "postgres://postgres@127.0.0.1:${PORT[$1]}/postgres?sslmode=disable"; }

start fsync-on -c fsync=on -c synchronous_commit=on -c full_page_writes=on
start fsync-off -c fsync=off -c synchronous_commit=off -c full_page_writes=off

printf '\\set id random(1, 10000)\nUPDATE pgb SET v = v + 1 WHERE id = :id;\n' >"$out/update.sql"
go test -c -o "$out/postgres.test" ./store/postgres

echo "leaselab PostgreSQL benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), $PASSES passes × $N messages"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}')"
for pass in $(seq 1 "$PASSES"); do
  order="fsync-on fsync-off"
  [ $((pass % 2)) = 0 ] && order="fsync-off fsync-on"
  for s in $order; do
    echo "pass $pass $s load: $(uptime | sed 's/.*load average: //')" | tee -a "$out/load.txt"
    for c in 1 16; do
      tps=$(as_pg "$PG_BIN/pgbench" -h 127.0.0.1 -p "${PORT[$s]}" -U postgres -n -c "$c" -j "$((c > 1 ? 2 : 1))" -T 5 -f "$out/update.sql" postgres 2>/dev/null |
        sed -n 's/^tps = \([0-9.]*\) (without.*/\1/p')
      echo "Benchmark${BENCH%%/*}/pgbench/clients=$c $s 1 0 ns/op $tps msgs/s" >>"$out/raw.txt"
    done
    pid=$(head -1 "${DIR[$s]}/data/postmaster.pid")
    (cd store/postgres && LEASELAB_PG="$(url_of "$s")" LEASELAB_BENCH_PGPID=$pid "$out/postgres.test" \
      -test.run '^$' -test.bench "^Benchmark$BENCH\$" -test.benchtime "${N}x" -test.count 1 -test.timeout 30m) |
      grep '^Benchmark' | sed "s/^\(Benchmark[^ \t]*\)-[0-9]*\([ \t]\)/\1 $s\2/" >>"$out/raw.txt"
  done
done
echo
python3 - "$out/raw.txt" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    name, server = f[0].split("/", 1)[1], f[1]
    metrics = {f[i + 1]: float(f[i]) for i in range(3, len(f) - 1, 2) if re.match(r"^[0-9.]+$", f[i])}
    rows.setdefault((name, server), []).append(metrics)
cols = ["msgs/s", "client-µs/msg", "server-µs/msg", "commits/msg", "stmts/msg"]
def med(rs, k):
    v = [r[k] for r in rs if k in r]
    return statistics.median(v) if v else None
def fmt(x, k):
    if x is None: return "—"
    return f"{x:,.0f}" if k in ("msgs/s", "client-µs/msg", "server-µs/msg") else f"{x:.2f}"
for server in ("fsync-on", "fsync-off"):
    print(f"{server}: medians of the passes [msgs/s lowest–highest]")
    print("| variant | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for (name, s), rs in rows.items():
        if s != server: continue
        lo, hi = min(r.get("msgs/s", 0) for r in rs), max(r.get("msgs/s", 0) for r in rs)
        cells = [fmt(med(rs, k), k) for k in cols]
        cells[0] += f" [{lo:,.0f}–{hi:,.0f}]"
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
# Issue 34's targets, from the runs side by side: each pass's ratio on each server.
def ratios(a, b, server):
    return [x["msgs/s"] / y["msgs/s"] for x, y in zip(rows.get((a, server), []), rows.get((b, server), []))
            if "msgs/s" in x and y.get("msgs/s")]
print("targets of issue 34 (fsync on; each pass's ratio, side by side):")
for slots, want in (("100", 1.3), ("16", 1.5)):
    rs = ratios(f"leaselab/hosted/slots={slots}", f"river/nowork/fast/slots={slots}", "fsync-on")
    if rs:
        verdict = "met" if statistics.median(rs) >= want else "MISSED"
        print(f"  hosted ≥ {want}× River doing no work (fast fetch), {slots} slots: {verdict} (" +
              ", ".join(f"{r:.2f}" for r in rs) + ")")
for slots in ("100", "16"):
    for fetch in ("fast", "default"):
        rs = ratios(f"leaselab/hosted/slots={slots}", f"river/same-writes/{fetch}/slots={slots}", "fsync-on")
        if rs:
            print(f"  hosted ÷ River doing the same writes ({fetch} fetch), {slots} slots: " + ", ".join(f"{r:.2f}" for r in rs))
    rs = ratios(f"leaselab/hosted/slots={slots}", f"river/in-tx-slow-path/fast/slots={slots}", "fsync-on")
    if rs:
        print(f"  (hosted ÷ River's slow path, each job completed in its own transaction, {slots} slots: " +
              ", ".join(f"{r:.2f}" for r in rs) + ")")
PY
echo "raw output: $out/raw.txt; load: $out/load.txt"
