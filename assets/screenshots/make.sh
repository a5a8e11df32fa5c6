#!/usr/bin/env bash
# Remakes the lab's screenshots from the real program: the lab runs in tmux at 120×40, keys are
# sent as a teacher would press them, the pane is captured with its colours, and
# charmbracelet/freeze + rsvg-convert (Debian's librsvg2-bin) turn the capture into a PNG.
#
#   assets/screenshots/make.sh
#
# Needs tmux, rsvg-convert and freeze (go install github.com/charmbracelet/freeze@latest).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$ROOT/assets/screenshots"
WORK=$(mktemp -d)
T=(tmux -L "leaselab-shot-$$" -f /dev/null)
trap '"${T[@]}" kill-server >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
FREEZE=${FREEZE:-$(command -v freeze || echo "$(go env GOPATH)/bin/freeze")}

(cd "$ROOT" && go build -o "$WORK/leaselab" .)

# shot NAME KEYS…: press KEYS in a fresh lab, then save NAME.png (and NAME.txt, the plain text).
shot() {
	local name=$1
	shift
	rm -f /tmp/workshop.db*
	"${T[@]}" new-session -d -s lab -x 120 -y 40 "env TERM=xterm-256color $WORK/leaselab --db /tmp/workshop.db; sleep 30"
	sleep 1.5
	for k in "$@"; do
		"${T[@]}" send-keys -t lab "$k"
		sleep 0.35
	done
	"${T[@]}" capture-pane -p -e -t lab >"$WORK/$name.ansi"
	"${T[@]}" capture-pane -p -t lab >"$OUT/$name.txt"
	"${T[@]}" kill-server
	# freeze ignores SGR 39/49 (default colours): spell them as a reset for the picture.
	sed -e 's/\x1b\[39m\x1b\[49m/\x1b[0m/g' -e 's/\x1b\[39m/\x1b[0m/g' -e 's/\x1b\[49m/\x1b[0m/g' \
		"$WORK/$name.ansi" >"$WORK/$name.fixed"
	for _ in 1 2 3; do
		"$FREEZE" -x "cat $WORK/$name.fixed" -o "$WORK/$name.svg" --window=false \
			--font.family "DejaVu Sans Mono" --font.size 14 --line-height 1.25 --padding 20 \
			--margin 0 --border.radius 0 --shadow.blur 0 >/dev/null 2>&1 || true
		[[ -s $WORK/$name.svg ]] && break
	done
	rsvg-convert -z 1 "$WORK/$name.svg" -o "$OUT/$name.png"
	echo "wrote $OUT/$name.png"
}

# Leasing on: A and B each finish one payment; A claims PAY-003 and crashes (x); the clock moves
# 300 ms (+++) and B claims PAY-004; f moves the clock past A's lease: PAY-003 is EXPIRED.
shot lab n n n n n n n x + + + n f
# Three more steps: B finishes PAY-004, then reclaims PAY-003 (lease v2).
shot lab-reclaim n n n n n n n x + + + n f n n n
