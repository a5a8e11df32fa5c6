#!/usr/bin/env bash
# Benchmarks of issue 5, "Speed": leaselab's claim + finalize, fused step and batches against
# maragu.dev/goqite and the raw SQLite write limit, in one process, on file databases in WAL with
# the same driver and DSN. Prints one report (medians of COUNT runs) with the machine it ran on.
#
# Not run by CI. By hand, on a machine nobody else is using:
#     bash .ci/bench.sh                 # about 4 minutes
#     COUNT=9 N=5000 bash .ci/bench.sh  # more runs, more messages per run
# The raw `go test -bench` output is kept in the file named at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

COUNT="${COUNT:-5}" # runs of every benchmark; the report shows medians
N="${N:-3000}"      # messages per run (BenchmarkFairness: 4 × N)

raw="$(mktemp -t leaselab-bench.XXXXXX)"
echo "leaselab benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go version | cut -d' ' -f3-)"
echo "driver:  modernc.org/sqlite $(go list -m -f '{{.Version}}' modernc.org/sqlite), goqite $(go list -m -f '{{.Version}}' maragu.dev/goqite)"
echo "runs:    $COUNT × $N messages per benchmark"
# Other programs on the machine move the figures; PSI says how much CPU they were taking.
psi() { [ -r /proc/pressure/cpu ] && head -1 /proc/pressure/cpu || echo "not available"; }
echo "CPU pressure before: $(psi)"

go test ./store/ -run '^$' -bench '^Benchmark(RawLimit|Queues|Backlog|Fairness)$' \
  -benchtime "${N}x" -count "$COUNT" -timeout 30m >"$raw"
echo "CPU as Go sees it:   $(grep -m1 '^cpu:' "$raw" | cut -d' ' -f2- | sed 's/ *$//')"
echo
go run ./store/internal/benchtable <"$raw"
echo
# Pages written per message do not depend on the machine: counted by a test, with one worker
# and automatic checkpoints off.
echo "WAL frames (4 KiB pages) written per message, 1 worker:"
go test ./store/ -run '^TestWALFramesPerMessage$' -v -count 1 | sed -n 's/^ *frames_test.go:[0-9]*: /  /p'
echo
echo "CPU pressure after:  $(psi)"
echo "raw output: $raw"
