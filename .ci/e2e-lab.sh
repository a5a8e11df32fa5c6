#!/usr/bin/env bash
# End-to-end check of the lab in a real terminal: tmux at 120×40, the database file given with
# --db read back with sqlite3. It checks what issue 3 says the lab must show, a lesson both ways
# against "leaselab run", then the resident memory with 1,000 messages and 8 workers, the 80×24
# screen, NO_COLOR, the free run (g), and leaselab watch on a database that a worker process
# works on, and (with LEASELAB_PG) the skip-locked lesson on PostgreSQL. Exits non-zero on the first
# failure.
#
#   .ci/e2e-lab.sh            (installs tmux and sqlite3 with apt-get when missing)
#   KEEP=1 .ci/e2e-lab.sh     keep the work folder (screen captures, database) for a look
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/.ci/e2e-lib.sh"
e2e_init leaselab-e2e

# Tools: tmux and sqlite3, installed when missing.
e2e_need tmux=tmux sqlite3=sqlite3

e2e_build

# start NAME ARGS…: run the lab in a detached tmux session, 120×40 unless SIZE says otherwise. TERM=xterm-256color: tmux
# answers Bubble Tea's start-up background query, so the lab starts at once. The exit code goes
# to $WORK/NAME.exit.
start() {
	local name=$1
	shift
	e2e_pane "$name" "${SIZE:--x 120 -y 40}" "env TERM=xterm-256color ${ENVVARS:-} $BIN $*"
}

# wait_for NAME TEXT [SECONDS]: until the screen shows TEXT.
wait_for() { e2e_wait_for "$1" "$2" "${3:-10}" "screen never showed \"$2\""; }

sql() { sqlite3 "$DB" "$1"; }

# step_to_end NAME: step until the verdict shows (a few keys at a time, as a teacher would).
step_to_end() {
	local name=$1 i
	for ((i = 0; i < 60; i++)); do
		if screen "$name" | grep -qF "VERDICT:"; then return 0; fi
		# A lesson's question stops the steps until it is answered: any answer runs the step.
		if screen "$name" | grep -qF "PREDICT:"; then keys "$name" A; fi
		keys "$name" n n n
		sleep 0.15
	done
	fail "no verdict after stepping"
}

# step_until NAME TEXT: step (answering questions) until the screen shows TEXT.
step_until() {
	local name=$1 text=$2 i
	for ((i = 0; i < 10; i++)); do
		screen "$name" | grep -qF -- "$text" && return 0
		if screen "$name" | grep -qF "PREDICT:"; then keys "$name" A; fi
		keys "$name" n
		sleep 0.4
	done
	wait_for "$name" "$text"
}

DB="$WORK/lab.db"
start lab --db "$DB"
wait_for lab "PAY-006"

# 1. Rows PAY-001…PAY-006 Pending; the badge follows the scenario; l flips it.
for i in 1 2 3 4 5 6; do
	row lab "PAY-00$i" | grep -q "Pending" || fail "PAY-00$i is not Pending"
done
pass "rows PAY-001…PAY-006 Pending"
screen lab | grep -qF "LEASING ON" || fail "no LEASING ON badge (playground has leasing on)"
keys lab l
wait_for lab "LEASING OFF"
wait_for lab "from the next action on"
keys lab l
wait_for lab "LEASING ON"
pass "badge LEASING ON; l flips it to LEASING OFF and back"

# 2. With leasing on, step until Worker-A claims: the row matches the database.
keys lab n
wait_for lab "Worker-A claimed PAY-001"
line=$(row lab PAY-001)
[[ $line == *Processing* && $line == *Worker-A* ]] || fail "PAY-001 row after the claim: $line"
shown_until=$(grep -oE '[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z' <<<"$line" | head -n1)
db_row=$(sql "select Status, LockedBy, LockedUntilUtc from OutboxMessages where IdempotencyKey='PAY-001'")
IFS='|' read -r db_status db_owner db_until <<<"$db_row"
[[ $db_status == Processing ]] || fail "database Status is $db_status"
[[ $line == *" $db_owner "* ]] || fail "screen LockedBy differs from the database ($db_owner): $line"
[[ $db_until == *"T$shown_until" ]] || fail "screen LockedUntilUtc $shown_until, database $db_until"
pass "PAY-001 on screen = database: $db_status, $db_owner, $db_until"

# 3. x crashes Worker-A; f moves the clock past its lease: EXPIRED; a step reclaims by Worker-B.
keys lab x
wait_for lab "CRASHED"
screen lab | grep -E "Worker-A +CRASHED" >/dev/null || fail "Worker-A not shown CRASHED"
pass "x: Worker-A CRASHED"
keys lab f
wait_for lab "EXPIRED"
row lab PAY-001 | grep -q EXPIRED || fail "PAY-001 not EXPIRED after f"
pass "f: clock past the lease, PAY-001 EXPIRED"
keys lab n
wait_for lab "Worker-B reclaimed PAY-001"
row lab PAY-001 | grep -q "Worker-B" || fail "PAY-001 row does not show Worker-B"
[[ $(sql "select LockedBy from OutboxMessages where IdempotencyKey='PAY-001'") == Worker-B ]] ||
	fail "database LockedBy is not Worker-B after the reclaim"
pass "step: Worker-B reclaimed PAY-001 (screen and database)"

# 4. Leasing off, stepped to the end: 6 duplicated messages, the failing verdict.
keys lab R
wait_for lab "step 0"
keys lab l
wait_for lab "LEASING OFF"
step_to_end lab
screen lab | grep -qF "duplicated messages 6" || fail "leasing off: not 6 duplicated messages"
screen lab | grep -qF "VERDICT: FAIL" || fail "leasing off: no failing verdict"
[[ $(sql "select count(*) from OutboxMessages where Status='Processed'") == 6 ]] || fail "not 6 Processed rows"
pass "leasing off: 6 duplicated messages, VERDICT: FAIL"

# 5. Leasing on (R restores the scenario's settings), stepped to the end: 0 and the passing verdict.
keys lab R
wait_for lab "step 0"
wait_for lab "LEASING ON"
step_to_end lab
screen lab | grep -qF "duplicated messages 0" || fail "leasing on: duplicated messages not 0"
screen lab | grep -qF "VERDICT: PASS" || fail "leasing on: no passing verdict"
pass "leasing on: 0 duplicated messages, VERDICT: PASS"

# 6. q quits with exit code 0.
keys lab q
[[ $(e2e_wait_exit lab) == 0 ]] || fail "the lab did not exit 0 after q"
pass "q quits, exit 0"

# 6b. A lesson both ways, against "leaselab run": stale-owner's verdict passes though its
# processed-once check fails (not in the lesson's verdict: set aside, never a plain FAIL); with
# o pressed before the first step the run is "--ownership-check=false", expectations and all.
json_field() { grep -oE "\"$1\": *(true|false)" | grep -oE '(true|false)$'; } # a boolean of --json
for flip in "" o; do
	name="lesson${flip}"
	start "$name" --scenario stale-owner
	wait_for "$name" "PAY-001"
	if [[ -n $flip ]]; then
		keys "$name" "$flip"
		wait_for "$name" "ownership-check OFF from the next action on"
	fi
	step_to_end "$name"
	flag=()
	[[ -n $flip ]] && flag=(--ownership-check=false)
	report=$("$BIN" run stale-owner "${flag[@]}" --json --report-dir "")
	passed=$(json_field passed <<<"$report")
	met=$(json_field expectations_met <<<"$report")
	[[ $met == true ]] || fail "leaselab run stale-owner ${flag[*]}: expectations not met"
	if [[ $passed == true ]]; then want="VERDICT: PASS"; else want="VERDICT: FAIL"; fi
	screen "$name" | grep -qF "$want" || fail "stale-owner ${flag[*]}: the lab's verdict is not the headless run's ($want)"
	screen "$name" | grep -qF "✓ as expected with ownership-check=" || fail "stale-owner ${flag[*]}: expectations not shown met"
	if screen "$name" | grep -qF "✗ FAIL each message processed exactly once"; then
		fail "stale-owner: a check outside the lesson's verdict shows as a plain FAIL"
	fi
	# Re-processed after a lost lease (ownership check on): at-least-once, shown aside to say why.
	if [[ -z $flip ]]; then
		screen "$name" | grep -qF "○ fail each message processed exactly once" || fail "stale-owner: the check set aside is not marked ○"
	fi
	keys "$name" q
	pass "stale-owner ${flag[*]:-(default)}: $want as leaselab run says, expectations met, no plain FAIL outside the verdict"
done

# 6c. Time travel: step 3 times, press b, and the database file (read by sqlite3, not the
# screen) holds what it held after step 2; a step then goes along the recorded future again.
TDB="$WORK/tt.db"
ttrows() { sqlite3 "$TDB" "select Id, Status, ifnull(LockedBy,'-'), ifnull(LockedUntilUtc,'-'), Attempts, LeaseVersion from OutboxMessages order by Id"; }
start tt --db "$TDB" --workers 3
wait_for tt "PAY-006"
keys tt n
wait_for tt "history step 1 of 1"
keys tt n
wait_for tt "history step 2 of 2"
after2=$(ttrows)
keys tt n
wait_for tt "history step 3 of 3"
after3=$(ttrows)
[[ $after3 != "$after2" ]] || fail "time travel: step 3 changed nothing in the database"
keys tt b
wait_for tt "history step 2 of 3 (in the past)"
wait_for tt "the database as it was"
[[ $(ttrows) == "$after2" ]] || fail "time travel: after b the database is not as after step 2:
$(ttrows)
want
$after2"
row tt PAY-003 | grep -q "Pending" || fail "time travel: PAY-003 is not Pending on screen after b"
pass "b: the database file is as it was after step 2 (sqlite3), PAY-003 Pending again"
keys tt n
wait_for tt "history step 3 of 3"
[[ $(ttrows) == "$after3" ]] || fail "time travel: stepping on again did not redo step 3"
pass "space after b redoes step 3 along the recorded future"
keys tt q

# 7. Resident memory with 1,000 messages and 8 workers, after some steps: under 50 MiB.
start big --messages 1000 --workers 8
wait_for big "rows 1–"
# A few keys at a time: a loaded machine steps slowly, and the lab skips steps beyond 16 waiting.
for ((i = 0; i < 10; i++)); do keys big n n n n; sleep 0.3; done
wait_for big "step 40" 30
pid=$(pgrep -P "$("${T[@]}" display-message -p -t big '#{pane_pid}')" -x leaselab || true)
[[ -n $pid ]] || pid=$("${T[@]}" display-message -p -t big '#{pane_pid}')
rss_kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
hwm_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
echo "     RSS with 1000 messages, 8 workers, 40 steps: $((rss_kb / 1024)) MiB (peak $((hwm_kb / 1024)) MiB)"
((hwm_kb < 50 * 1024)) || fail "resident memory $((hwm_kb / 1024)) MiB, over 50 MiB"
pass "resident memory under 50 MiB"
keys big q

# 8. 80×24 is the smallest screen the lab lays out: everything above still reads there.
SIZE="-x 80 -y 24" start small --db "$WORK/small.db"
wait_for small "PAY-006"
keys small n x f
wait_for small "EXPIRED"
screen small | grep -qF "LEASING ON" || fail "80×24: no badge"
screen small | grep -E "Worker-A +CRASHED" >/dev/null || fail "80×24: CRASHED not shown"
(($(screen small | wc -l) <= 24)) || fail "80×24: taller than the window"
for k in "space step" "x crash" "f expire" "p play" "? keys"; do
	screen small | tail -n1 | grep -qF "$k" || fail "80×24: the footer lacks \"$k\""
done
# What the workshop's steps point at, whole: the table's columns, every check of the verdict on
# its own line (the reclaim check among them), the toggles' keys, nothing cut in the checks.
screen small | grep -E "Status +Payment +LockedBy +LockedUntilUtc +Lease" >/dev/null || fail "80×24: the table lacks a column"
screen small | grep -qF "crashed owner's lease reclaimed after expiry" || fail "80×24: the reclaim check is not on screen"
screen small | grep -qF "LEASING ON  (l)" || fail "80×24: the leasing key is not beside the badge"
screen small | grep -qF "fencing off (k)" || fail "80×24: the toggles' keys are not on screen"
if screen small | grep -E "(✓|✗) .*…$" >/dev/null; then fail "80×24: a check line is cut"; fi
keys small "?"
wait_for small "q/ctrl+c quit"
keys small "?"
pass "80×24: badge, rows, CRASHED and EXPIRED all on screen; the footer keeps the workshop keys, ? every key"
keys small q

# 9. NO_COLOR: no colour reaches the terminal, and every state still reads in words.
ENVVARS="NO_COLOR=1" start mono --db "$WORK/mono.db"
wait_for mono "PAY-006"
keys mono n x f
wait_for mono "EXPIRED"
"${T[@]}" capture-pane -p -e -t mono >"$WORK/mono.ansi"
if grep -qE $'\e\\[[0-9;]*(3[0-9]|4[0-9]|38;5|48;5)' "$WORK/mono.ansi"; then
	fail "NO_COLOR=1 but colours reached the terminal"
fi
screen mono | grep -qF "CRASHED" || fail "NO_COLOR: CRASHED not in words"
screen mono | grep -qF "▸ 1 Worker-A" || fail "NO_COLOR: selected worker not marked"
pass "NO_COLOR: no colour; CRASHED, EXPIRED and the selection still read"
keys mono q

# 10. g: the workers free-run on their own goroutines while the screen polls; a crash and f
# keep working; g stops them; every row ends Processed, on screen and in the database.
FREE_DB="$WORK/free.db"
start free --db "$FREE_DB"
wait_for free "PAY-006"
# Six messages start at 5 s between actions (a minute's run); > before g sets the pace: 100 ms.
keys free ">" ">" ">" ">" ">"
wait_for free "free run (g): pace 100ms"
keys free g
wait_for free "FREE-RUNNING"
keys free x
wait_for free "CRASHED"
pass "g: FREE-RUNNING; x crashes Worker-A while the workers run"
# Worker-A's lease (if it held one) blocks its row until the clock passes it: f, a few times.
for ((i = 0; i < 20; i++)); do
	if screen free | grep -qF "processed 6/6"; then break; fi
	keys free f
	sleep 0.3
done
wait_for free "processed 6/6"
keys free g
wait_for free "stopped: every worker finished the action in flight"
screen free | grep -qF "FREE-RUNNING" && fail "g did not stop the free run"
# The outbox pane may show only some rows (a crash that cost a lease adds lines to the checks):
# a row not on screen is scrolled to.
for i in 1 2 3 4 5 6; do
	for ((j = 0; j < 10; j++)); do
		[[ -n $(row free "PAY-00$i") ]] && break
		keys free PgDn
		sleep 0.1
	done
	row free "PAY-00$i" | grep -q "Processed" || fail "after g mode, PAY-00$i is not Processed on screen"
done
[[ $(sqlite3 "$FREE_DB" "select count(*) from OutboxMessages where Status='Processed'") == 6 ]] ||
	fail "after g mode, the database does not hold 6 Processed rows"
pass "g again stops the workers: 6 Processed on screen and in the database"
keys free l
wait_for free "LEASING OFF"
pass "the lab still responds after the free run"
keys free q
[[ $(e2e_wait_exit free) == 0 ]] || fail "the lab did not exit 0 after g mode and q"
pass "q after g mode quits, exit 0"

# 10b. e runs many-workers (500 messages, 8 workers) to its verdict at full speed, with leasing on
# and off; each within 10 s.
for leasing in true false; do
	name="e-$leasing"
	start "$name" --scenario many-workers --leasing="$leasing"
	wait_for "$name" "PAY-001"
	t0=$(date +%s%N)
	keys "$name" e
	wait_for "$name" "VERDICT:" 10
	ms=$((($(date +%s%N) - t0) / 1000000))
	screen "$name" | grep -qF "ran to the end at full speed" || fail "e ($leasing): no end note"
	echo "     e on many-workers, leasing $leasing: $ms ms to the verdict"
	pass "e: many-workers with leasing=$leasing reaches its verdict within 10 s"
	keys "$name" q
done

# 11. leaselab watch: the lab read-only on a database that a worker process works on.
SHARED="$WORK/shared.db"
"$BIN" seed --db "$SHARED" --messages 20 >/dev/null || fail "leaselab seed"
start watch watch --db "$SHARED"
wait_for watch "WATCH (read-only)"
wait_for watch "Pending 20"
pass "watch: 20 Pending rows of the seeded database"
"$BIN" worker --db "$SHARED" --name P1 --pace 20ms >"$WORK/p1.log" 2>&1 &
worker_pid=$!
e2e_bg "$worker_pid"
wait_for watch "Processed 20 of 20" 30
screen watch | grep -E "^. +[0-9]+ +PAY-0[0-9]+ +Processed +Paid|^. +[0-9]+ +PAY-0[0-9]+ +Processed +Failed" | grep -qF "Worker-P1" ||
	fail "watch: the Processed rows do not show LockedBy Worker-P1"
screen watch | grep -E "^ +Worker-P1 " | grep -qF "processed 20" || fail "watch: Worker-P1 is not shown holding what it processed"
screen watch | grep -qF "Just now: what successive reads of the database show" || fail "watch: no recent happenings"
wait "$worker_pid" || fail "the worker process failed (see $WORK/p1.log)"
[[ $(sqlite3 "$SHARED" "select count(*) from OutboxMessages where Status='Processed' and LockedBy='Worker-P1'") == 20 ]] ||
	fail "watch: the database does not hold 20 rows Processed by Worker-P1"
pass "watch: a worker process's 20 rows reach Processed, LockedBy Worker-P1, on screen and in the database"
keys watch q
[[ $(e2e_wait_exit watch) == 0 ]] || fail "watch did not exit 0 after q"
pass "watch: q quits, exit 0"

# 12. skip-locked on PostgreSQL (when LEASELAB_PG names a server, as .ci/run's does): the lab on
# a postgres:// --db, u turns SKIP LOCKED off, Worker-A's lock step leaves a transaction open
# that the server shows (idle in transaction, named Worker-A), and Worker-B's claim waits for it.
if [[ -n "${LEASELAB_PG:-}" ]]; then
	PSQL="${PSQL:-$(command -v psql || echo /usr/lib/postgresql/15/bin/psql)}"
	start pg --scenario skip-locked --db "'$LEASELAB_PG'"
	wait_for pg "skip-locked on (u)"
	keys pg u
	wait_for pg "skip-locked off (u)"
	step_until pg "locked PAY-001, tx open"
	row pg PAY-001 | grep -q "Pending" || fail "skip-locked: the locked PAY-001 does not read Pending"
	row pg PAY-001 | grep -qF "row lock: A" || fail "skip-locked: the lab does not show the server's row lock on PAY-001"
	open_tx=$("$PSQL" "$LEASELAB_PG" -XAtc "select count(*) from pg_stat_activity where application_name = 'Worker-A' and state = 'idle in transaction'")
	[[ $open_tx == 1 ]] || fail "skip-locked: the server shows $open_tx open transactions of Worker-A, want 1"
	pass "skip-locked: Worker-A's lock step holds a transaction open on the server; the row still reads Pending"
	step_until pg "WAITED"
	wait_for pg "held by Worker-A's open transaction"
	pass "skip-locked off: Worker-B's claim waits for Worker-A's row lock, and the lab names the holder"
	step_to_end pg
	screen pg | grep -qF "A CLAIM WAITED BEHIND ANOTHER WORKER'S ROW LOCK" || fail "skip-locked off: not the lesson's failing verdict"
	pass "skip-locked off: the lesson's verdict (a claim waited)"
	keys pg q
fi

echo "e2e: all checks passed"
