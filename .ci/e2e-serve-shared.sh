#!/usr/bin/env bash
# End-to-end check of "leaselab serve --shared playground" with the real OpenSSH client: three
# attendees (ana, ben, carl) and the teacher in tmux at 120×40 (ssh -tt), every row checked in the
# room's database with sqlite3. Each attendee's key claims and finalizes a message under their
# own name; ana's connection is cut while she holds a lease, and her row stays Processing under
# her name until the teacher moves the clock; carl reclaims it (lease version 2); ana comes back
# and her old finalize is refused; leasing off for the room has ben and ana process the same row,
# counted as a duplicate; the teacher writes the transcript; SIGTERM ends it all, exit 0, the
# database removed. It prints the server's resident memory. Exits non-zero on the first failure.
#
#   .ci/e2e-serve-shared.sh          (installs tmux, sqlite3 and openssh-client with apt-get when missing)
#   KEEP=1 .ci/e2e-serve-shared.sh   keep the work folder (screens, server log) for a look
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/.ci/e2e-lib.sh"
e2e_init leaselab-e2e-shared

mkdir -p "$WORK/handouts"
e2e_ssh_start --shared playground --teacher-key "$WORK/teacher.pub" --handouts "$WORK/handouts"
DB=$(sed -n 's/^the room.s database: //p' "$WORK/server.out")
[[ -n $DB && -f $DB ]] || fail "no database named, or none at: $DB"
pass "the shared room on port $PORT, its database $DB"

rss() { awk '/^VmRSS/ {printf "%d", int($2 / 1024)}' "/proc/$SERVER_PID/status"; }
echo "server empty: $(rss) MiB"

wait_for() { e2e_wait_for "$1" "$2" "${3:-15}" "$1's screen never showed \"$2\""; }
dbrow() { sqlite3 "$DB" "select Status, LockedBy, LeaseVersion from OutboxMessages where IdempotencyKey='$1'"; }
want_row() { # want_row KEY ROW: until the database holds ROW for KEY (5 s)
	local i got
	for ((i = 0; i < 100; i++)); do
		got=$(dbrow "$1")
		[[ $got == "$2" ]] && return 0
		sleep 0.05
	done
	fail "$1 is $got in the database, want $2"
}

e2e_attend ana ana
e2e_attend ben ben
e2e_attend carl carl
e2e_teacher
wait_for teacher "LEASELAB ROOM — the teacher"
i=1
for who in ana ben carl; do
	wait_for "$who" "PAY-006"
	keys "$who" Space
	wait_for "$who" "[your actions: 1]"
	wait_for "$who" "$who claimed PAY-00$i"
	want_row "PAY-00$i" "Processing|$who|1"
	i=$((i + 1))
done
pass "each attendee's space claims a message under their own name: $(dbrow PAY-001), $(dbrow PAY-002), $(dbrow PAY-003)"
i=2
for who in ben carl; do
	keys "$who" Space
	wait_for "$who" "[your actions: 2]"
	keys "$who" Space
	wait_for "$who" "[your actions: 3]"
	want_row "PAY-00$i" "Processed|$who|1"
	i=$((i + 1))
done
pass "ben and carl finalize theirs: PAY-002 $(dbrow PAY-002), PAY-003 $(dbrow PAY-003)"
echo "server with 3 attendees and the teacher: $(rss) MiB"

# ana calls the provider, then her connection is cut (the ssh client is killed).
keys ana Space
wait_for ana "[your actions: 2]"
"${T[@]}" kill-session -t ana
wait_for teacher "AWAY (connection dropped)"
want_row PAY-001 "Processing|ana|1"
keys ben Space
wait_for ben "ben claimed PAY-004"
want_row PAY-001 "Processing|ana|1"
pass "ana's connection cut: PAY-001 stays $(dbrow PAY-001), ben's claim takes PAY-004"

keys teacher f
wait_for teacher "clock moved 09:00:00.000Z → 09:00:00.501Z"
keys carl Space
wait_for carl "carl reclaimed PAY-001 from ana"
want_row PAY-001 "Processing|carl|2"
pass "the teacher moves the clock: carl reclaims PAY-001, $(dbrow PAY-001)"

e2e_attend ana2 ana
wait_for ana2 "your old worker ana is"
keys ana2 F
wait_for ana2 "REJECTED"
want_row PAY-001 "Processing|carl|2"
wait_for teacher "ana's stale finalize of PAY-001 (lease version 1) was refused"
pass "ana reconnects with a fresh worker (ana#2); her old finalize is refused: PAY-001 still $(dbrow PAY-001)"

keys teacher l
wait_for teacher "leasing switched off"
keys ben Space Space Space
wait_for ben "ben loaded"
keys ben Space
wait_for ben "ben processed PAY-005"
keys ana2 Space
wait_for ana2 "ana#2 loaded"
keys ana2 Space
wait_for ana2 "ana#2 processed PAY-005"
wait_for teacher "duplicates 1"
wait_for teacher "PAY-005 was processed by ben and ana at once (leasing off)"
pass "leasing off for the room: PAY-005 processed by ben and ana, counted as a duplicate"

keys teacher w
wait_for teacher "the room's transcript is written"
t=$(compgen -G "$WORK/handouts/leaselab-room-playground-*.md" || true)
[[ -n $t ]] && grep -qF "PAY-005 was processed by ben and ana at once (leasing off)" "$t" || fail "transcript: $t"
pass "w: the transcript $(basename "$t") in the server's folder"
keys teacher e
wait_for carl "SCOREBOARD:"
echo "server at the end: $(rss) MiB"

e2e_stop_server
wait_for ben "the server is shutting down"
grep -qF "stopped; the room is closed" "$WORK/server.out" || fail "no closing line"
[[ ! -e $DB ]] || fail "the room's database is still there: $DB"
left=$(ls -A "$LABTMP")
[[ -z $left ]] || fail "left in TMPDIR: $left"
pass "SIGTERM: attendees told, server exit 0, the room's database removed"
echo "e2e-serve-shared passed"
