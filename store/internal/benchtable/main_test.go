package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkRawLimit-2   	    5000	     41000 ns/op	        42.0 cpu-us/msg	         1.0 max-wait-ms	       100.0 min-share-%	     24000 msgs/s	         0.1 p99-wait-ms
BenchmarkQueues/workers=1/goqite-2 5000 200000 ns/op 5000 msgs/s
BenchmarkQueues/workers=1/goqite-2 5000 200000 ns/op 4000 msgs/s
BenchmarkQueues/workers=1/goqite-2 5000 200000 ns/op 6000 msgs/s
BenchmarkQueues/workers=1/claim-finalize-2 5000 200000 ns/op 5500 msgs/s
BenchmarkQueues/workers=1/claim-finalize-2 5000 200000 ns/op 4000 msgs/s
BenchmarkQueues/workers=1/claim-finalize-2 5000 200000 ns/op 7200 msgs/s
BenchmarkQueues/workers=1/batch-2 5000 200000 ns/op 16000 msgs/s
BenchmarkFairness/workers=8/claim-finalize-fair-2 20000 1 ns/op 12 max-wait-ms 3 p99-wait-ms 12.4 min-share-% 3000 msgs/s
BenchmarkBacklog/fused/queued=1000-2 5000 1 ns/op 7000 msgs/s
BenchmarkBacklog/fused/queued=100000-2 5000 1 ns/op 6500 msgs/s
PASS
`

func TestParseAndMedian(t *testing.T) {
	r, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := r.get("Queues/workers=1/goqite", "msgs/s"); !ok || v != 5000 {
		t.Fatalf("median = %v %v, want 5000", v, ok)
	}
	if r.runs() != 3 {
		t.Fatalf("runs = %d, want 3", r.runs())
	}
	var out strings.Builder
	report(&out, r)
	// claim-finalize over goqite, pass by pass: 5500/5000, 4000/4000, 7200/6000 → median 1.10.
	for _, want := range []string{"24,000 tx/s", "5,500  1.10×", "16,000  3.20×", "7,000", "0.93",
		"batch claim ≥ 3× goqite at 1 worker: met", "fair queue (2 ms turns)", "12 ms", "12.4 %"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 44500: "44,500", 1234567: "1,234,567"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}
