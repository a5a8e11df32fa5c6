package explore

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestCheckpointResume: a search saved at the end of depth 4 and resumed to depth 6 proves what
// the search to depth 6 in one go proves, with the same figures; a checkpoint of another search
// is refused.
func TestCheckpointResume(t *testing.T) {
	sc := lesson(t, "playground", nil)
	b := DefaultBounds()
	b.Depth = 6
	whole := searchWith(t, sc, b, nil)

	var saved []byte
	b4 := b
	b4.Depth = 4
	searchWith(t, sc, b4, func(c *Config) {
		c.Checkpoint = func(ck *Checkpoint) error {
			var buf bytes.Buffer
			if _, err := ck.WriteTo(&buf); err != nil {
				return err
			}
			saved = buf.Bytes()
			return nil
		}
	})
	ck, err := ReadCheckpoint(bytes.NewReader(saved))
	if err != nil || ck.Depth != 3 {
		t.Fatalf("checkpoint at depth %d, err %v: want the last level before the bound, 3", ck.Depth, err)
	}
	resumed := searchWith(t, sc, b, func(c *Config) { c.Resume = ck })
	if resumed.Depth != whole.Depth || resumed.Exhausted != whole.Exhausted || resumed.Violation != nil ||
		resumed.States != whole.States || resumed.Distinct != whole.Distinct || resumed.SeenBefore+resumed.Pruned != whole.SeenBefore+whole.Pruned {
		t.Errorf("resumed: depth %d, %d states (%d distinct, %d seen before, %d pruned); in one go: depth %d, %d states (%d, %d, %d)",
			resumed.Depth, resumed.States, resumed.Distinct, resumed.SeenBefore, resumed.Pruned,
			whole.Depth, whole.States, whole.Distinct, whole.SeenBefore, whole.Pruned)
	}
	other := lesson(t, "aba-fencing", nil)
	dir := t.TempDir()
	if _, err := Run(context.Background(), Config{Scenario: other, DB: newDB(t, dir), Bounds: b, Now: time.Now, Resume: ck}); err == nil {
		t.Error("a checkpoint of the playground resumed aba-fencing")
	}
}
