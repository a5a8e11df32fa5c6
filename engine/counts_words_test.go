package engine

import "testing"

func TestRecount(t *testing.T) {
	for _, tc := range []struct {
		in          string
		workers, ms int
		want        string
	}{
		{"Playground: two workers, six payments, you drive", 2, 6, "Playground: two workers, six payments, you drive"},
		{"Playground: two workers, six payments, you drive", 3, 40, "Playground: three workers, 40 payments, you drive"},
		{"Playground: two workers, six payments, you drive", 1, 1, "Playground: one worker, one payment, you drive"},
		{"EIGHT WORKERS, ONE OWNER PER MESSAGE ✅", 4, 500, "FOUR WORKERS, ONE OWNER PER MESSAGE ✅"},
		{"BEFORE: two workers share a durable outbox", 20, 6, "BEFORE: 20 workers share a durable outbox"},
		{"8 workers × 500 messages", 2, 1, "2 workers × 1 message"},
		{"Two workers", 5, 1, "Five workers"},
	} {
		if got := recount(tc.in, tc.workers, tc.ms); got != tc.want {
			t.Errorf("recount(%q, %d, %d) = %q, want %q", tc.in, tc.workers, tc.ms, got, tc.want)
		}
	}
}

// --workers and --messages keep a scenario's title true.
func TestApplyRetitles(t *testing.T) {
	sc := &Scenario{Name: "p", Title: "Playground: two workers, six payments, you drive", Messages: 6,
		Workers: []WorkerSpec{{Short: "A", ID: "Worker-A"}, {Short: "B", ID: "Worker-B"}}}
	if err := sc.Apply(Overrides{Workers: 3, Messages: 40}); err != nil {
		t.Fatal(err)
	}
	if want := "Playground: three workers, 40 payments, you drive"; sc.Title != want {
		t.Fatalf("title %q, want %q", sc.Title, want)
	}
}
