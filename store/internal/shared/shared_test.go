package shared

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"leaselab/engine"
)

// A batch claim's rows come back in claim order: oldest first, ties by Id.
func TestInClaimOrder(t *testing.T) {
	got := InClaimOrder([]Claimed[string]{
		{engine.Message{ID: 3}, "b"}, {engine.Message{ID: 2}, "a"}, {engine.Message{ID: 1}, "b"},
	}, strings.Compare)
	var ids []int64
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	if fmt.Sprint(ids) != "[2 1 3]" {
		t.Fatalf("claim order = %v, want [2 1 3]", ids)
	}
}

// A bulk seed is cut into whole chunks; a chunk that fails stops it, counting what was written.
func TestSeedChunks(t *testing.T) {
	var ranges []string
	err := SeedChunks(25, 10, func(from, to int) error {
		ranges = append(ranges, fmt.Sprintf("%d-%d", from, to))
		if from == 21 {
			return errors.New("disk full")
		}
		return nil
	})
	var pe *engine.PartialSeedError
	if !errors.As(err, &pe) || pe.Written != 20 || pe.Of != 25 || fmt.Sprint(ranges) != "[1-10 11-20 21-25]" {
		t.Fatalf("SeedChunks = %v after %v, want a partial seed of 20 of 25 after 1-10 11-20 21-25", err, ranges)
	}
	if err := SeedChunks(-1, 10, nil); err == nil || err.Error() != "seed: negative count -1" {
		t.Fatalf("SeedChunks(-1) = %v", err)
	}
}

// A finalize's transaction ends as its result: rolled back by the guard, failed, or committed.
func TestFinalized(t *testing.T) {
	res := engine.FinalizeResult{PriorOwner: "Worker-B"}
	if got, err := Finalized(res, fmt.Errorf("wrapped: %w", ErrRolledBack)); err != nil || got.Committed || got.PriorOwner != "Worker-B" {
		t.Errorf("rolled back = %+v, %v; want the result, not committed", got, err)
	}
	if got, err := Finalized(res, errors.New("busy")); err == nil || got != (engine.FinalizeResult{}) {
		t.Errorf("failed = %+v, %v; want nothing but the error", got, err)
	}
	if got, err := Finalized(res, nil); err != nil || !got.Committed {
		t.Errorf("committed = %+v, %v", got, err)
	}
}

// A trace names named parameters by name and the others by position.
func TestArgs(t *testing.T) {
	named := func(a any) (engine.Arg, bool) {
		s, ok := a.(string)
		return engine.Arg{Name: "n", Value: s}, ok
	}
	if got := fmt.Sprint(Args([]any{1, "x"}, named)); got != "[{1 1} {n x}]" {
		t.Errorf("Args = %s", got)
	}
	if got := fmt.Sprint(Args([]any{1, "x"}, nil)); got != "[{1 1} {2 x}]" {
		t.Errorf("Args without names = %s", got)
	}
}
