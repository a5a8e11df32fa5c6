#!/usr/bin/env bash
# Remakes the lab's screenshots from the real program: for each line of assets/screenshots/shots
# (NAME SIZE KEYS…) the lab runs in tmux at SIZE, the keys are sent as a teacher would press
# them, the pane is captured as plain text (NAME.txt) and with its colours, and
# charmbracelet/freeze + rsvg-convert (Debian's librsvg2-bin) turn the capture into NAME.png.
# go test ./ui checks that every NAME.txt is what the current program draws for its keys.
#
#   assets/screenshots/make.sh              # every screenshot
#   assets/screenshots/make.sh lab-projector  # only those named
#
# Needs tmux, rsvg-convert (apt-get install librsvg2-bin) and freeze
# (go install github.com/charmbracelet/freeze@v0.2.2).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/assets/screenshots"
WORK=$(mktemp -d)
T=(tmux -L "leaselab-shot-$$" -f /dev/null)
# stop_lab: kills the tmux server, then waits (10 s, then SIGKILL, 5 s more) until the lab's
# process group (the pane's shell is its leader) is gone, so that nothing writes the database
# or $WORK after they are removed. It fails when the group outlives that.
stop_lab() {
	local pid i
	pid=$("${T[@]}" display-message -p -t lab '#{pane_pid}' 2>/dev/null) || pid=
	"${T[@]}" kill-server >/dev/null 2>&1 || true
	[[ -n $pid ]] || return 0
	for ((i = 0; i < 200; i++)); do
		kill -0 -- "-$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	echo "make.sh: the lab (process group $pid) still runs 10 s after its tmux server; SIGKILL" >&2
	kill -KILL -- "-$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 -- "-$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	echo "make.sh: the lab (process group $pid) is still running" >&2
	return 1
}
trap 'stop_lab || true; rm -rf "$WORK"' EXIT
FREEZE=${FREEZE:-$(command -v freeze || echo "$(go env GOPATH)/bin/freeze")}
DB=/tmp/workshop.db # the path the screens show; the test shows the same

(cd "$ROOT" && go build -o "$WORK/leaselab" .)

# shot NAME SIZE [--FLAG=VALUE…] KEYS…: press KEYS in a fresh lab of SIZE (120x40), started with
# the flags (--theme=projector), then save NAME.png and NAME.txt.
shot() {
	local name=$1 size=$2 flags=()
	shift 2
	while [[ $# -gt 0 && $1 == --* ]]; do
		flags+=("$1")
		shift
	done
	rm -f "$DB" "$DB-wal" "$DB-shm"
	"${T[@]}" new-session -d -s lab -x "${size%x*}" -y "${size#*x}" \
		"env TERM=xterm-256color $WORK/leaselab --db $DB ${flags[*]}; sleep 30"
	sleep 1.5
	for k in "$@"; do
		"${T[@]}" send-keys -t lab "$k"
		sleep 0.35
	done
	sleep 0.5
	"${T[@]}" capture-pane -p -e -t lab >"$WORK/$name.ansi"
	"${T[@]}" capture-pane -p -t lab >"$OUT/$name.txt"
	stop_lab # before the next shot removes the database
	# freeze ignores SGR 39/49 (default colours): spell them as a reset for the picture; and
	# reverse video (SGR 7, the projector theme's selection): spell it black on white, as a dark
	# terminal shows it.
	sed -e 's/\x1b\[39m\x1b\[49m/\x1b[0m/g' -e 's/\x1b\[39m/\x1b[0m/g' -e 's/\x1b\[49m/\x1b[0m/g' \
		-e 's/\x1b\[\([0-9;]*\);7m/\x1b[\1;38;5;16;48;5;231m/g' -e 's/\x1b\[7m/\x1b[38;5;16;48;5;231m/g' \
		"$WORK/$name.ansi" >"$WORK/$name.fixed"
	# The capture goes in on stdin: freeze --execute needs a pty, and fails now and then without one.
	"$FREEZE" -o "$WORK/$name.svg" --window=false \
		--font.family "DejaVu Sans Mono" --font.size 14 --line-height 1.25 --padding 20 \
		--margin 0 --border.radius 0 --shadow.blur 0 <"$WORK/$name.fixed" >/dev/null
	rsvg-convert -z 1 "$WORK/$name.svg" -o "$OUT/$name.png"
	echo "wrote $OUT/$name.png and $name.txt"
}

ONLY=" $* "
while read -r name size keys; do
	[[ -z $name || $name == \#* ]] && continue
	[[ $# -gt 0 && $ONLY != *" $name "* ]] && continue
	# shellcheck disable=SC2086 # the keys are words
	shot "$name" "$size" $keys
done <"$OUT/shots"
rm -f "$DB" "$DB-wal" "$DB-shm"
