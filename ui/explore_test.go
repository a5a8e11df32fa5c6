package ui

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/assets"
	"leaselab/engine"
)

// exploreLab is a lab whose explore key runs search.
func exploreLab(t *testing.T, search ExploreFunc) *lab {
	t.Helper()
	return newLabOn(t, "playground", 160, 50, Config{Scenarios: sqliteLessons(), Open: opener(t, engine.Overrides{}), Explore: search})
}

// TestExploreKeyFindsAndOpens: X searches the open scenario with the lab's toggles now, shows
// the search's progress and the violation it found, and X again opens the violation's file.
func TestExploreKeyFindsAndOpens(t *testing.T) {
	src, _, ok := assets.Scenario("playground")
	if !ok {
		t.Fatal("no playground")
	}
	file := filepath.Join(t.TempDir(), "playground-found.scenario")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	var got map[string]bool
	var name string
	l := exploreLab(t, func(ctx context.Context, n string, toggles map[string]bool, progress func(string)) (ExploreOutcome, error) {
		name, got = n, toggles
		progress("explore: depth 3 done, 47 states")
		return ExploreOutcome{Line: "explore playground: a shortest schedule that breaks one-owner, 6 moves", File: file}, nil
	})
	l.press("a") // the atomic claim off
	l.press("X")
	if name != "playground" || got[engine.ToggleAtomicClaim] || !got[engine.ToggleLeasing] {
		t.Fatalf("searched %q with %v: want playground, the atomic claim off", name, got)
	}
	l.must("breaks one-owner, 6 moves — X opens it in the lab")
	l.press("X")
	if l.m.target != file || l.m.exploring != nil || l.m.sess == nil {
		t.Fatalf("X opened %q (exploring %v, session %v), want %s", l.m.target, l.m.exploring, l.m.sess, file)
	}
	l.mustNot("X opens it")
}

// TestExploreKeyProof: a search that finds nothing shows what was proved.
func TestExploreKeyProof(t *testing.T) {
	proof := "no schedule of depth ≤ 10 with ≤ 1 crash and ≤ 2 clock moves breaks a safety check: 9 states"
	l := exploreLab(t, func(context.Context, string, map[string]bool, func(string)) (ExploreOutcome, error) {
		return ExploreOutcome{Line: proof}, nil
	})
	l.press("X")
	l.must(proof)
	if l.m.exploring != nil {
		t.Error("a search that found nothing still offers something")
	}
}

// TestExploreKeyEscCancels: the search runs in the background, its progress in the status
// line, and esc cancels it.
func TestExploreKeyEscCancels(t *testing.T) {
	started := make(chan struct{})
	l := exploreLab(t, func(ctx context.Context, _ string, _ map[string]bool, progress func(string)) (ExploreOutcome, error) {
		progress("explore: depth 2 done, 9 states")
		close(started)
		<-ctx.Done()
		return ExploreOutcome{}, ctx.Err()
	})
	batch, ok := updated(&l.m, keyMsg("X"), Model.update)().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("X: %T, want the search and its progress", batch)
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- batch[0]() }()
	<-started
	updated(&l.m, batch[1](), Model.update) // the progress line; its next wait is not run
	l.must("explore: depth 2 done, 9 states (esc cancels)")
	updated(&l.m, tea.KeyMsg{Type: tea.KeyEsc}, Model.update)
	select {
	case msg := <-done:
		l.send(msg)
	case <-time.After(10 * time.Second):
		t.Fatal("esc did not cancel the search")
	}
	l.must("explore: cancelled")
	if l.m.exploring != nil {
		t.Error("a cancelled search is still under way")
	}
}

// TestExploreKeyKeepsTheHelpWhole: with X, the ? screen at 80×24 still ends on its last line
// (quit), as the lab without X does (.ci/e2e-lab.sh reads it there).
func TestExploreKeyKeepsTheHelpWhole(t *testing.T) {
	l := newLabOn(t, "playground", 80, 24, Config{Scenarios: sqliteLessons(), Open: opener(t, engine.Overrides{}),
		Explore: func(context.Context, string, map[string]bool, func(string)) (ExploreOutcome, error) {
			return ExploreOutcome{}, nil
		}})
	l.press("?")
	l.must("X explore")
	l.must("q/ctrl+c quit")
}

// TestExploreKeyTakesTheLessonsToggles: X searches with every toggle as the lab holds it, the
// lessons' own keys too: rescuer-race with its guard flipped by G is searched so (X used to
// pass only the toggles of the lab's own keys, and searched the lesson as it was declared).
func TestExploreKeyTakesTheLessonsToggles(t *testing.T) {
	var got map[string]bool
	l := newLabOn(t, "rescuer-race", 160, 50, Config{Scenarios: sqliteLessons(), Open: opener(t, engine.Overrides{}),
		Explore: func(_ context.Context, _ string, toggles map[string]bool, _ func(string)) (ExploreOutcome, error) {
			got = toggles
			return ExploreOutcome{Line: "no schedule of depth ≤ 10 breaks a safety check: 9 states"}, nil
		}})
	tg, _ := engine.LookupToggle(engine.ToggleGuardedRescue)
	was := tg.Of(l.m.frame.Settings)
	l.press("G")
	l.press("X")
	if on, ok := got[tg.Name]; !ok || on == was {
		t.Fatalf("searched with %v: want %s=%v, as G left it", got, tg.Name, !was)
	}
	for _, tg := range engine.Registry() {
		if _, ok := got[tg.Name]; !ok {
			t.Errorf("the search was not given %s", tg.Name)
		}
	}
}
