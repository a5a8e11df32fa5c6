#!/usr/bin/env bash
# The shared room on the real binary, measured (not run by CI: it takes a minute and wants the
# machine to itself): "leaselab serve --shared playground" and N OpenSSH clients in tmux at
# 120×40, each a worker of the room, pressing space about 5 times a second for SECS seconds (tmux
# send-keys; every client in turn). It prints the server's resident memory empty, with the
# attendees connected, at its peak, and after every client has left, and the room's claims won
# per attendee at the end, read from its database with sqlite3.
#
#   .ci/room-shared.sh              N=30 SECS=30
#   N=10 SECS=10 .ci/room-shared.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/.ci/e2e-lib.sh"
e2e_init leaselab-room-shared
N=${N:-30}
SECS=${SECS:-30}

MESSAGES=$((N * 5 * SECS / 3 * 5 / 4))
e2e_ssh_start --shared playground --messages "$MESSAGES" --max-sessions "$N" --teacher-key "$WORK/teacher.pub" --handouts "$WORK"
DB=$(sed -n 's/^the room.s database: //p' "$WORK/server.out")
rss() { awk '/^VmRSS/ {printf "%d", int($2 / 1024)}' "/proc/$SERVER_PID/status"; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
sleep 1
echo "server empty ($MESSAGES messages): $(rss) MiB"

for ((i = 0; i < N; i++)); do
	e2e_attend "a$i" "att$i"
done
for ((i = 0; i < N; i++)); do
	for ((j = 0; j < 400; j++)); do screen "a$i" | grep -qF "your actions: 0" && break; sleep 0.05; done
done
echo "$N attendees connected: $(rss) MiB"

end=$(($(date +%s) + SECS))
while (($(date +%s) < end)); do
	t0=$(date +%s%N)
	for ((i = 0; i < N; i++)); do keys "a$i" Space; done
	left=$((200 - ($(date +%s%N) - t0) / 1000000))
	((left > 0)) && sleep "0.$(printf '%03d' "$left")"
done
sleep 1
peak=$(awk '/^VmHWM/ {print int($2/1024)}' "/proc/$SERVER_PID/status")
echo "after $SECS s of presses: $(rss) MiB (peak $peak MiB); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "claims won per attendee (fewest, median, most):" \
	"$(sqlite3 "$DB" "select count(*) from OutboxMessages where LockedBy is not null group by LockedBy order by 1" |
		awk '{a[NR] = $1} END {print a[1], a[int((NR + 1) / 2)], a[NR]}')"
for ((i = 0; i < N; i++)); do keys "a$i" q; done
sleep 3
echo "every client gone: $(rss) MiB"
