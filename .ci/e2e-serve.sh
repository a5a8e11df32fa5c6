#!/usr/bin/env bash
# End-to-end check of "leaselab serve" with the real OpenSSH client: the server on a free port of
# 127.0.0.1, two attendees in tmux at 120×40 (ssh -tt), the first two steps of the README's
# five-minute workshop in one lab checked against its database with sqlite3, the other lab
# untouched, a connection without a pty, the teacher's table and an offer, then SIGTERM with a
# lab open: every attendee told, every database removed, exit 0. Exits non-zero on the first
# failure.
#
#   .ci/e2e-serve.sh          (installs tmux, sqlite3 and openssh-client with apt-get when missing)
#   KEEP=1 .ci/e2e-serve.sh   keep the work folder (screens, server log) for a look
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/.ci/e2e-lib.sh"
e2e_init leaselab-e2e-serve

# The sessions' databases go to a folder of the script's own ($LABTMP), so that what is left is seen.
e2e_ssh_start --teacher-key "$WORK/teacher.pub"
FP=$(grep -oE 'SHA256:[A-Za-z0-9+/]+' "$WORK/server.out") || fail "no fingerprint printed"
[[ $(stat -c %a "$WORK/host_key") == 600 ]] || fail "host key mode $(stat -c %a "$WORK/host_key")"
pass "serving on port $PORT, host key $FP (0600)"

# The fingerprint ssh sees is the one printed: known_hosts is filled from the server itself.
seen=$(ssh-keygen -lf "$WORK/known_hosts" | grep -oE 'SHA256:[A-Za-z0-9+/]+')
[[ $seen == "$FP" ]] || fail "ssh sees $seen, the server printed $FP"
pass "ssh-keyscan's fingerprint is the printed one"

# No pty: one line, exit 1.
set +e
out=$("${SSH[@]}" attendee@127.0.0.1 after </dev/null 2>&1)
code=$?
set -e
[[ $code == 1 && $out == *"leaselab needs a terminal: connect with  ssh -t -p $PORT 127.0.0.1"* ]] ||
	fail "no pty: exit $code, printed: $out"
pass "without a pty: \"${out%%$'\n'*}\", exit 1"

attend() { e2e_attend "$1" "$1" "${2:-}"; } # attend NAME [SCENARIO]
wait_for() { e2e_wait_for "$1" "$2" "${3:-15}" "$1's screen never showed \"$2\""; }
dbs() { compgen -G "$LABTMP/leaselab-run-*/leaselab.db" || true; }

attend ana
wait_for ana "PAY-006"
DB=$(dbs)
[[ -n $DB && $(wc -l <<<"$DB") == 1 ]] || fail "one lab, databases: $DB"
attend ben
wait_for ben "PAY-006"
[[ $(dbs | wc -l) == 2 ]] || fail "two labs, databases: $(dbs)"
pass "two labs, two databases"

# Workshop step 1, BEFORE: leasing off, play to the end: every message processed twice.
keys ana l
wait_for ana "LEASING OFF"
keys ana Space Space
wait_for ana "Worker-B loaded 6 pending rows"
keys ana p
wait_for ana "VERDICT: FAIL" 30
wait_for ana "duplicated messages 6"
wait_for ana "processing attempts 12"
pass "step 1 (BEFORE): duplicated messages 6, processing attempts 12, VERDICT: FAIL"

# Workshop step 2, leasing on: R, one step, and the row is the database's.
keys ana R
wait_for ana "step 0"
wait_for ana "LEASING ON"
keys ana Space
wait_for ana "Worker-A claimed PAY-001, lease until 09:00:00.500Z"
line=$(row ana PAY-001)
[[ $line == *Processing* && $line == *Worker-A* ]] || fail "PAY-001 after the claim: $line"
claimed=0
for f in $(dbs); do
	r=$(sqlite3 "$f" "select Status, LockedBy, LockedUntilUtc from OutboxMessages where IdempotencyKey='PAY-001'")
	[[ $r == "Processing|Worker-A|"*"T09:00:00.500Z" ]] && claimed=$((claimed + 1))
done
[[ $claimed == 1 ]] || fail "$claimed databases hold PAY-001 Processing by Worker-A, want 1 (ana's)"
pass "step 2 (leasing on): PAY-001 Processing, Worker-A, until 09:00:00.500Z on screen and in ana's database only"

screen ben | grep -qF "Worker-A claimed" && fail "ben's lab shows ana's step"
row ben PAY-001 | grep -q Pending || fail "ben's PAY-001: $(row ben PAY-001)"
screen ben | grep -qF "step 0" || fail "ben's lab is not at step 0"
pass "ben's lab untouched: PAY-001 Pending, step 0"

# The teacher's table, through the teacher's key: both labs, ana's steps; an offer reaches
# ben's lab and waits for his key.
e2e_teacher 30
wait_for teacher "the teacher's table: 2 of 40 labs open"
screen teacher | grep -E "^ana +127\.0\.0\.1:[0-9]+ +playground +[0-9]+ " >/dev/null || fail "no row for ana"
screen teacher | grep -E "^ben +127\.0\.0\.1:[0-9]+ +playground +0 " >/dev/null || fail "no row for ben at 0 steps"
screen teacher | grep -qF "PAY-006" && fail "the teacher got a lab"
keys teacher Tab Tab s
wait_for teacher "offered after to 2 labs"
wait_for ben "the teacher offers the scenario after: press O"
screen ben | grep -qF "LEASELAB  Playground:" || fail "the offer replaced ben's lab without a key"
keys ben O
wait_for ben "opened after"
pass "teacher's table: both labs; an offer of after reaches ben and opens on his O only"
keys teacher q

# ana quits: her database goes; SIGTERM with ben's lab open: he is told, his goes too.
keys ana q
[[ $(e2e_wait_exit ana) == 0 ]] || fail "ana's ssh exit: $(cat "$WORK/ana.exit" 2>/dev/null)"
for ((i = 0; i < 100; i++)); do [[ $(dbs | wc -l) == 1 ]] && break; sleep 0.05; done
[[ $(dbs | wc -l) == 1 ]] || fail "after ana quit, databases: $(dbs)"
pass "q: ana's ssh exits 0, her database is removed"

keys ben g
wait_for ben "FREE-RUNNING"
e2e_stop_server
wait_for ben "the server is shutting down"
grep -qF "stopped; 1 labs closed" "$WORK/server.out" || fail "no closing line"
left=$(ls -A "$LABTMP")
[[ -z $left ]] || fail "left in TMPDIR: $left"
pass "SIGTERM: ben told, server exit 0, no database left"
echo "e2e-serve passed"
