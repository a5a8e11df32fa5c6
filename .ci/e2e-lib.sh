# Shared by the end-to-end scripts (source it): a work folder, a tmux server of the script's own,
# panes whose exit code is kept, background processes, and a cleanup that cannot race them.
#
# The cleanup ends every process the script started before it removes the folder they write
# into: each pane's process group (tmux makes every pane a session leader) and each background
# process gets SIGTERM (leaselab removes its own temporary folders on it), then SIGKILL after
# 5 s, and the cleanup waits until none of them is left. Only then is the folder removed. A shell
# ended that way never runs the "echo $? > NAME.exit" after its command, so nothing writes into
# the folder while it goes. A failure to tidy up is reported on stderr and never changes the
# script's exit code: the verdict is the checks'.

# e2e_init PREFIX: $WORK (a new folder), $T (the tmux command line), the EXIT trap.
e2e_init() {
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	T=(tmux -L "$1-$$" -f /dev/null)
	E2E_BG=()
	E2E_PANES=()
	trap e2e_cleanup EXIT
}

# e2e_bg PID: a background process the cleanup must end (and wait for) if it is still running.
e2e_bg() { E2E_BG+=("$1"); }

# e2e_pane NAME "-x W -y H" COMMAND: COMMAND in a detached tmux session NAME; its exit code goes to
# $WORK/NAME.exit, and the pane stays open 30 s after it so that its last screen can be read.
e2e_pane() {
	local name=$1 size=$2 cmd=$3
	# shellcheck disable=SC2086
	"${T[@]}" new-session -d -s "$name" $size "$cmd ; echo \$? > $WORK/$name.exit; sleep 30"
}

# e2e_gone: true when no pane process group and no background process of the script is left.
e2e_gone() {
	local pid
	for pid in "${E2E_PANES[@]}"; do kill -0 -- "-$pid" 2>/dev/null && return 1; done
	for pid in "${E2E_BG[@]}"; do kill -0 "$pid" 2>/dev/null && return 1; done
	return 0
}

# e2e_signal SIG: SIG to every pane's process group and every background process.
e2e_signal() {
	local pid
	for pid in "${E2E_PANES[@]}"; do kill "-$1" -- "-$pid" 2>/dev/null; done
	for pid in "${E2E_BG[@]}"; do kill "-$1" "$pid" 2>/dev/null; done
}

e2e_cleanup() {
	local rc=$? i
	set +e
	# shellcheck disable=SC2207
	E2E_PANES=($("${T[@]}" list-panes -a -F '#{pane_pid}' 2>/dev/null))
	e2e_signal TERM
	for ((i = 0; i < 100; i++)); do e2e_gone && break; sleep 0.05; done
	if ! e2e_gone; then
		echo "cleanup: processes still running after SIGTERM and 5 s; sending SIGKILL" >&2
		e2e_signal KILL
		for ((i = 0; i < 100; i++)); do e2e_gone && break; sleep 0.05; done
	fi
	"${T[@]}" kill-server >/dev/null 2>&1
	for i in "${E2E_BG[@]}"; do wait "$i" 2>/dev/null; done
	if e2e_gone; then
		if [[ -n "${KEEP:-}" ]]; then
			echo "kept $WORK"
		elif ! rm -rf "$WORK"; then
			echo "cleanup: could not remove $WORK (the run's verdict stands: exit $rc)" >&2
		fi
	else
		echo "cleanup: processes of this run still running; $WORK left in place (the run's verdict stands: exit $rc)" >&2
	fi
	exit "$rc"
}

# e2e_need TOOL=PACKAGE…: installs with apt-get the packages of the tools that are missing (CI runs
# as root).
e2e_need() {
	local need=() pair
	for pair in "$@"; do command -v "${pair%%=*}" >/dev/null 2>&1 || need+=("${pair#*=}"); done
	if ((${#need[@]})); then
		echo "installing ${need[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null && apt-get install -y -qq "${need[@]}" >/dev/null
	fi
}

# e2e_wait_exit NAME: until the pane NAME's command has written its exit code (5 s at most); prints it.
e2e_wait_exit() {
	local i
	for ((i = 0; i < 100; i++)); do [[ -s $WORK/$1.exit ]] && break; sleep 0.05; done
	cat "$WORK/$1.exit" 2>/dev/null
}

# e2e_serve ARGS…: starts "$BIN serve --listen 127.0.0.1:0 --host-key $WORK/host_key ARGS…" in the
# background with its labs' databases in $WORK/tmp (LABTMP) and its output in $WORK/server.out,
# waits for it to listen, and sets SERVER_PID and PORT. SERVER_ENV adds environment variables
# ("GODEBUG=gctrace=1 GOMEMLIMIT=…"). It returns non-zero when no listening line came.
e2e_serve() {
	local i
	LABTMP="$WORK/tmp"
	mkdir -p "$LABTMP"
	# shellcheck disable=SC2086
	env TMPDIR="$LABTMP" ${SERVER_ENV:-} "$BIN" serve --listen 127.0.0.1:0 --host-key "$WORK/host_key" "$@" \
		>"$WORK/server.out" 2>&1 &
	SERVER_PID=$!
	e2e_bg "$SERVER_PID"
	for ((i = 0; i < 100; i++)); do
		grep -q "attendees type" "$WORK/server.out" 2>/dev/null && break
		sleep 0.05
	done
	PORT=$(grep -oE 'listening on 127\.0\.0\.1:[0-9]+' "$WORK/server.out" | grep -oE '[0-9]+$')
}

pass() { echo "ok   $*"; }

# fail MESSAGE: says what failed, then the last screen captured and, when a server was started,
# its output; exits 1 (the EXIT trap tidies up). A script may define its own after sourcing.
fail() {
	echo "FAIL: $*" >&2
	if [[ -f "$WORK/screen.txt" ]]; then
		echo "--- last screen ---" >&2
		cat "$WORK/screen.txt" >&2
	fi
	if [[ -f "$WORK/server.out" ]]; then
		echo "--- server output ---" >&2
		cat "$WORK/server.out" >&2
	fi
	exit 1
}

# e2e_build: $BIN, the program built from $ROOT into $WORK.
e2e_build() {
	BIN="$WORK/leaselab"
	(cd "$ROOT" && go build -o "$BIN" .) || fail "go build"
}

# e2e_ssh_start ARGS…: the start the scripts of "leaselab serve" share, after e2e_init: tmux,
# sqlite3 and the OpenSSH client (installed when missing), the program in $BIN, a teacher's key
# pair ($WORK/teacher and $WORK/teacher.pub, for ARGS to name), the server started with ARGS
# (e2e_serve), its host key taken into $WORK/known_hosts from the server itself, and $SSH, the
# ssh command line (an array) that trusts that key only.
e2e_ssh_start() {
	e2e_need tmux=tmux sqlite3=sqlite3 ssh=openssh-client
	e2e_build
	ssh-keygen -q -t ed25519 -N "" -C teacher -f "$WORK/teacher" >/dev/null
	e2e_serve "$@" || fail "no listening line"
	ssh-keyscan -p "$PORT" -t ed25519 127.0.0.1 2>/dev/null >"$WORK/known_hosts"
	SSH=(ssh -o UserKnownHostsFile="$WORK/known_hosts" -o StrictHostKeyChecking=yes -o LogLevel=ERROR -p "$PORT")
}

# e2e_stop_server: SIGTERM to the server e2e_serve started; fails unless it exits 0.
e2e_stop_server() {
	local code=0
	kill -TERM "$SERVER_PID"
	wait "$SERVER_PID" || code=$?
	[[ $code == 0 ]] || fail "server exit $code after SIGTERM"
}

# e2e_attend PANE USER [ARGS]: an attendee at 120×40 in the tmux session PANE, connected as USER
# with no key of the teacher's (ssh -tt), ARGS (a scenario) sent as the ssh command.
e2e_attend() {
	e2e_pane "$1" "-x 120 -y 40" "env TERM=xterm-256color ${SSH[*]} -o IdentitiesOnly=yes -i /dev/null -tt $2@127.0.0.1 ${3:-}"
}

# e2e_teacher: the teacher at 120×HEIGHT (40 unless given) in the tmux session "teacher", with
# the teacher's key.
e2e_teacher() {
	e2e_pane teacher "-x 120 -y ${1:-40}" "env TERM=xterm-256color ${SSH[*]} -o IdentitiesOnly=yes -i $WORK/teacher -tt teacher@127.0.0.1"
}

# screen NAME: the pane's screen, kept in $WORK/screen.txt for fail to show.
screen() { "${T[@]}" capture-pane -p -t "$1" >"$WORK/screen.txt" && cat "$WORK/screen.txt"; }
keys() { "${T[@]}" send-keys -t "$1" "${@:2}"; }
# e2e_wait_for NAME TEXT SECONDS MESSAGE: until NAME's screen shows TEXT; after SECONDS, fail
# with MESSAGE.
e2e_wait_for() {
	local name=$1 text=$2 limit=$3 msg=$4 i
	for ((i = 0; i < limit * 20; i++)); do
		if screen "$name" | grep -qF -- "$text"; then return 0; fi
		sleep 0.05
	done
	fail "$msg"
}
# row NAME KEY: the outbox row of KEY as the screen shows it.
row() { screen "$1" | grep -E "^. +[0-9]+ +$2 " | head -n1; }
