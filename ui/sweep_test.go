package ui

import "testing"

// skipSweepUnderRace skips a test that sweeps every lesson under every setting on one goroutine
// when the race detector is on and -short is given (.ci/run's race pass): there it costs minutes
// and finds no race, since nothing in it runs concurrently. go test ./... runs it whole.
func skipSweepUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled && testing.Short() {
		t.Skip("a sweep of every lesson on one goroutine: run whole without -race")
	}
}
