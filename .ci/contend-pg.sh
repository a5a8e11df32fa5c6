#!/usr/bin/env bash
# Issue 22 item 2: where claim + finalize spends the server's time at W workers. One PostgreSQL 15
# server of its own (fsync off, as .ci/pg.sh's, with pg_stat_statements, track_planning and
# pageinspect), BenchmarkVersusRiver/leaselab/claim+finalize/workers=W of N messages, and while it
# runs, SAMPLES times DELAY seconds apart: the claim index's leaf entries (killed by a scan,
# not killed, against the unfinished rows: the difference is dead entries no scan could mark
# yet) and an EXPLAIN (ANALYZE, BUFFERS) of the claim in a transaction rolled back. After: the
# statements' buffers hit, plans and times per call, and the server's user and system CPU per
# message (the postmaster's reaped children: the benchmark's backends end with it). PERF=file
# also records `perf record -a` for 5 s mid-run (then: perf report -i file --comm postgres).
# Not run by CI. By hand:
#     bash .ci/contend-pg.sh 20000 16
#     SAMPLES=0 bash .ci/contend-pg.sh 5000 1   # W is 1 or 16, the benchmark's two
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
N="${1:-20000}"
W="${2:-16}"
SAMPLES="${SAMPLES:-3}"
DELAY="${DELAY:-3}"
. .ci/pg.sh
PG_EXTRA="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on ${PGOPTS:-}"
pg_start >/dev/null || exit 3
trap pg_stop EXIT
dir=$PG_DIR
port=$PG_PORT
P() { "$PG_BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q "$@"; }
P -c 'CREATE EXTENSION pg_stat_statements' -c 'CREATE EXTENSION pageinspect'
go test -c -o "$dir/postgres.test" ./store/postgres
pid=$(head -1 "$dir/data/postmaster.pid")
export LEASELAB_PG="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable" LEASELAB_BENCH_PGPID=$pid
P -c 'SELECT pg_stat_statements_reset()' >/dev/null
echo "claim + finalize, $W workers, $N messages, $(date -u '+%Y-%m-%d %H:%M UTC'), load: $(uptime | sed 's/.*average: //')"
read -r u0 s0 < <(awk '{print $16, $17}' "/proc/$pid/stat")
(cd store/postgres && "$dir/postgres.test" -test.run '^$' -test.bench "^BenchmarkVersusRiver/leaselab/claim\+finalize/workers=$W\$" \
  -test.benchtime "${N}x" -test.count 1) >"$dir/bench.out" 2>&1 &
bench=$!
if [ -n "${PERF:-}" ]; then
  sleep 3
  perf record -a -F 997 -o "$PERF" -- sleep 5 >/dev/null 2>&1
fi
claim="WITH c AS MATERIALIZED (SELECT Id, LockedBy, LockedUntilUtc FROM OutboxMessages WHERE ProcessedAtUtc IS NULL AND (Status = 'Pending' OR (Status = 'Processing' AND LockedUntilUtc < '2026-01-15 09:00:00+00')) ORDER BY CreatedAtUtc, Id LIMIT 1 FOR UPDATE SKIP LOCKED) UPDATE OutboxMessages o SET Status = 'Processing', LockedBy = 'explain', LockedUntilUtc = '2026-01-15 10:00:00+00', Attempts = o.Attempts + 1, LeaseVersion = o.LeaseVersion + 1 FROM c WHERE o.Id = c.Id AND o.ProcessedAtUtc IS NULL AND (o.Status = 'Pending' OR (o.Status = 'Processing' AND o.LockedUntilUtc < '2026-01-15 09:00:00+00'))"
for i in $(seq 1 "$SAMPLES"); do
  sleep "$DELAY"
  s=$(P -At -c "SELECT schemaname FROM pg_stat_user_tables WHERE relname = 'outboxmessages' ORDER BY relid DESC LIMIT 1")
  [ -z "$s" ] && continue
  idx="$s.outboxmessages_claimable"
  echo "== sample $i"
  P -c "SELECT n_dead_tup, n_tup_upd, n_tup_hot_upd, pg_relation_size(relid) / 8192 heap_pages FROM pg_stat_user_tables WHERE schemaname = '$s' AND relname = 'outboxmessages'"
  P -c "WITH lv AS (SELECT b FROM generate_series(1, (pg_relation_size('$idx') / 8192 - 1)::int) b, bt_page_stats('$idx', b) st WHERE st.type = 'l'),
    it AS (SELECT lv.b, i.dead FROM lv, bt_page_items('$idx', lv.b) i)
    SELECT count(*) FILTER (WHERE dead) killed, count(*) FILTER (WHERE NOT dead) not_killed,
      (SELECT count(*) FROM $s.outboxmessages WHERE processedatutc IS NULL) unfinished,
      (SELECT count(*) FROM $s.outboxmessages WHERE status = 'Processing') processing,
      (SELECT count(*) FROM lv) leaves, (SELECT count(DISTINCT b) FROM it WHERE NOT dead) leaves_not_all_killed FROM it"
  P -c "SET search_path = $s" -c "BEGIN" -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $claim" -c "ROLLBACK"
done
wait $bench
sleep 0.5
read -r u1 s1 < <(awk '{print $16, $17}' "/proc/$pid/stat")
grep -E "^Benchmark" "$dir/bench.out" || tail -20 "$dir/bench.out"
echo "server CPU of the backends that ended: user $(((u1 - u0) * 10000000 / N / 1000)) µs/msg, system $(((s1 - s0) * 10000000 / N / 1000)) µs/msg"
P -c "SELECT left(regexp_replace(query, '\s+', ' ', 'g'), 50) statement, calls, plans,
  round(shared_blks_hit::numeric / calls, 1) hit_per_call, round(mean_exec_time::numeric * 1000) exec_us,
  round(mean_plan_time::numeric * 1000) plan_us FROM pg_stat_statements WHERE calls >= $((N / 2)) ORDER BY calls DESC LIMIT 4"
