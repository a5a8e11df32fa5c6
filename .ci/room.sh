#!/usr/bin/env bash
# A workshop's room on the real binary, measured (not run by CI: it takes minutes and wants the
# machine to itself): "leaselab serve" and N OpenSSH clients in tmux at 120×40; K of them open
# many-workers and press g, the others stay on the playground and step with Space, one press
# every ~0.3 s each, timed from send-keys to the screen showing the next step (capture-pane
# every 10 ms, so the figures are within ~10 ms). It prints the server's resident memory empty,
# with the labs idle, while K free-run, and 10 s after every client has quit; and the key
# latencies' median, p95 and max.
#
#   .ci/room.sh                 N=30 K=25 PRESSES=20 (per stepping lab)
#   N=10 K=5 .ci/room.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/.ci/e2e-lib.sh"
e2e_init leaselab-room
N=${N:-30}
K=${K:-25}
PRESSES=${PRESSES:-20}

SERVER_ENV="${SERVER_GODEBUG:+GODEBUG=$SERVER_GODEBUG} ${SERVER_ENV:-}" e2e_ssh_start --max-sessions "$N"

rss() {
	awk '/^VmRSS/ {r = int($2 / 1024)} END {printf "%d", r}' "/proc/$SERVER_PID/status"
	awk '/^Anonymous/ {a = int($2 / 1024)} /^Pss_File/ {f = int($2 / 1024)} END {printf " (anonymous %d, the binary and other files %d)", a, f}' "/proc/$SERVER_PID/smaps_rollup"
}
sleep 1
echo "server empty: $(rss) MiB"

for ((i = 0; i < N; i++)); do
	sc=playground
	((i < K)) && sc=many-workers
	e2e_attend "a$i" "a$i" "$sc"
done
for ((i = 0; i < N; i++)); do
	for ((j = 0; j < 400; j++)); do screen "a$i" | grep -qF "PAY-00" && break; sleep 0.05; done
done
sleep 2
echo "$N labs idle: $(rss) MiB"

for ((i = 0; i < K; i++)); do keys "a$i" g; done
sleep 5
echo "$K free-running, 5 s in: $(rss) MiB"

# Key presses in the others, one lab after another.
lat=()
for ((p = 1; p <= PRESSES; p++)); do
	for ((i = K; i < N; i++)); do
		before=$(screen "a$i" | grep -oE 'step [0-9]+' | head -n1)
		t0=$(date +%s%N)
		keys "a$i" Space
		for ((j = 0; j < 2000; j++)); do
			now=$(screen "a$i" | grep -oE 'step [0-9]+' | head -n1)
			[[ $now != "$before" ]] && break
			sleep 0.01
		done
		lat+=($((($(date +%s%N) - t0) / 1000000)))
		sleep 0.3
		# The playground ends after a few steps: start it again (R) when it is done.
		if screen "a$i" | grep -qF "DONE"; then keys "a$i" R; sleep 0.5; fi
	done
done
peak=$(awk '/^VmHWM/ {print int($2/1024)}' "/proc/$SERVER_PID/status")
if [[ -n ${SMAPS:-} ]]; then # where the memory is: the largest mappings, and how many
	awk '/^[0-9a-f]+-[0-9a-f]+ / {name = ($6 == "" ? "[anon]" : $6)} /^Rss:/ {rss[name] += $2; n[name]++} END {for (k in rss) print rss[k], n[k], k}' \
		"/proc/$SERVER_PID/smaps" | sort -rn | head -n 8 >"$SMAPS"
	grep -E '^(Threads|VmStk)' "/proc/$SERVER_PID/status" >>"$SMAPS"
fi
echo "$K free-running, after the presses: $(rss) MiB (peak $peak MiB)"
sorted=$(printf '%s\n' "${lat[@]}" | sort -n)
n=${#lat[@]}
p50=$(sed -n "$((n / 2 + 1))p" <<<"$sorted")
p95=$(sed -n "$(((n * 95 + 99) / 100))p" <<<"$sorted")
max=$(tail -n1 <<<"$sorted")
echo "key to screen over $n presses: p50 $p50 ms, p95 $p95 ms, max $max ms (capture-pane every 10 ms)"
screen "a0" | sed -n 2p

for ((i = 0; i < N; i++)); do keys "a$i" q; done
for ((j = 0; j < 200; j++)); do
	[[ -z $(compgen -G "$LABTMP/leaselab-run-*" || true) ]] && break
	sleep 0.05
done
echo "every client gone: $(rss) MiB"
sleep 10
echo "10 s later: $(rss) MiB"
[[ -n ${SERVER_GODEBUG:-} ]] && grep "^gc " "$WORK/server.out" | tail -n 40 >/tmp/room-gctrace.txt || true
