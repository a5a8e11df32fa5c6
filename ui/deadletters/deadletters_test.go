package deadletters

import (
	"testing"

	"leaselab/engine"
	"leaselab/ui/common"
)

// The dead letter V takes is the one after the one it redrove last, round to the first.
func TestRedriveTarget(t *testing.T) {
	f := &common.Frame{}
	for _, r := range []struct {
		key    string
		status string
	}{{"PAY-001", engine.StatusDeadLettered}, {"PAY-002", engine.StatusProcessed}, {"PAY-003", engine.StatusDeadLettered}, {"PAY-004", engine.StatusDeadLettered}} {
		f.Rows = append(f.Rows, engine.Row{IdempotencyKey: r.key, Status: r.status})
	}
	for after, want := range map[string]string{"": "PAY-001", "PAY-001": "PAY-003", "PAY-002": "PAY-003", "PAY-003": "PAY-004", "PAY-004": "PAY-001", "gone": "PAY-001"} {
		if got := (Pane{after: after}).target(f); got != want {
			t.Errorf("after %q: V takes %s, want %s", after, got, want)
		}
	}
}
