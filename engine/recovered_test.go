package engine

import (
	"errors"
	"strings"
	"testing"
)

// A panic in a free-running worker's goroutine becomes that worker's error: the process (a
// server's other sessions) goes on.
func TestRecoveredTurnsAPanicIntoTheWorkersError(t *testing.T) {
	err := recovered("Worker-A", func() error { panic("index out of range") })
	if err == nil || !strings.Contains(err.Error(), "Worker-A") || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("recovered panic = %v", err)
	}
	want := errors.New("busy")
	if err := recovered("Worker-B", func() error { return want }); err != want {
		t.Fatalf("recovered passes errors through: got %v", err)
	}
	if err := recovered("Worker-B", func() error { return nil }); err != nil {
		t.Fatalf("recovered(nil) = %v", err)
	}
}
