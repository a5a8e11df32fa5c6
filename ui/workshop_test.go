package ui

import (
	"strings"
	"testing"

	"leaselab/engine"
)

// TestReadmeWorkshop walks the five-minute workshop of README.md ("The lab's guide") key by key, so that the
// README stays true.
func TestReadmeWorkshop(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})

	// 1. BEFORE: leasing off, play to the end.
	l.press("l")
	l.must("LEASING OFF")
	l.press(" ", " ")
	l.must("Worker-A loaded 6 pending rows", "Worker-B loaded 6 pending rows")
	l.press("p")
	l.tickAll(1000)
	l.must("!! A B ×2", "duplicated messages 6", "processing attempts 12", "VERDICT: FAIL",
		"payments Paid 4 · Failed 2 · Pending 0")

	// 2. Leasing on: R restores the playground's settings.
	l.press("R")
	l.must("LEASING ON", "step 0")
	l.press(" ")
	l.must("Worker-A claimed PAY-001, lease until 09:00:00.500Z")

	// 3. Crash; the clock moves 300 ms; Worker-B claims PAY-002, not PAY-001.
	l.press("1", "x")
	l.must("Worker-A CRASHED holding PAY-001")
	l.press("+", "+", "+")
	l.must("clock 09:00:00.300Z", "200ms")
	l.press(" ")
	l.must("Worker-B claimed PAY-002, lease until 09:00:00.800Z")

	// 4. Expire.
	l.press("f")
	l.must("clock 09:00:00.501Z")
	if !strings.Contains(l.row("PAY-001"), "EXPIRED") || strings.Contains(l.row("PAY-002"), "EXPIRED") {
		t.Fatalf("after f: PAY-001 %q, PAY-002 %q", l.row("PAY-001"), l.row("PAY-002"))
	}

	// 5. Reclaim, restart, play to the end.
	for i := 0; i < 5 && !strings.Contains(l.view(), "Worker-B reclaimed PAY-001"); i++ {
		l.press(" ")
	}
	l.must("Worker-B reclaimed PAY-001 from Worker-A (lease ended 09:00:00.500Z), lease v2 until 09:00:01.001Z")
	row := l.row("PAY-001")
	if !strings.Contains(row, "Worker-B") || !strings.Contains(row, "2      2") {
		t.Fatalf("PAY-001 after the reclaim: %q", row)
	}
	l.press("r", "p")
	l.tickAll(1000)
	l.must("duplicated messages 0", "✓ ok   crashed owner's lease reclaimed after expiry", "VERDICT: PASS")
}
