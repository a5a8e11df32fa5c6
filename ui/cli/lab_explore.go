package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/explore"
	"leaselab/engine/scenario"
	"leaselab/engine/share"
	"leaselab/ui"
)

// labExploreLimit bounds the lab's explore key's search in time, on top of the default bounds:
// the lab waits on it.
const labExploreLimit = 20 * time.Second

// lazyDir is a temporary folder made when first asked for.
type lazyDir struct {
	mu   sync.Mutex
	path string
}

// get makes the folder, the first time, and returns its path.
func (d *lazyDir) get() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.path == "" {
		p, err := os.MkdirTemp("", runFolderPrefix(os.Getpid()))
		if err != nil {
			return "", fmt.Errorf("temporary folder: %w", err)
		}
		d.path = p
	}
	return d.path, nil
}

// remove removes the folder, if it was made.
func (d *lazyDir) remove() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.path != "" {
		os.RemoveAll(d.path)
		d.path = ""
	}
}

// labExplore is the lab's explore key (ui.ExploreFunc): "leaselab explore" of the scenario with
// the lab's toggles now, within the default bounds and labExploreLimit, on a new SQLite file in
// a folder of its own under dir (made at the first search), removed when the search ends
// unless it found a violation: its scenario file is written there, for the lab to open (as
// explore --open does), and the lab removes dir when it ends.
func labExplore(b Backends, root *labRoot, dir *lazyDir) ui.ExploreFunc {
	var searches atomic.Int64
	return func(ctx context.Context, name string, toggles map[string]bool, progress func(string)) (ui.ExploreOutcome, error) {
		src, _, err := assets.Load(name, scenario.MaxScenarioSize)
		if err != nil {
			return ui.ExploreOutcome{}, fmt.Errorf("explore %s: %w", name, err)
		}
		sc, err := root.load(name)
		if err != nil {
			return ui.ExploreOutcome{}, err
		}
		if err := sc.Apply(engine.Overrides{Toggles: toggles}); err != nil {
			return ui.ExploreOutcome{}, fmt.Errorf("explore %s: %w", sc.Name, err)
		}
		if sc.Backend != "" {
			return ui.ExploreOutcome{}, fmt.Errorf("explore %s: a %s lesson; explore runs on SQLite", sc.Name, sc.Backend)
		}
		top, err := dir.get()
		if err != nil {
			return ui.ExploreOutcome{}, err
		}
		sub := filepath.Join(top, fmt.Sprintf("search-%d", searches.Add(1)))
		if err := os.Mkdir(sub, 0o700); err != nil {
			return ui.ExploreOutcome{}, fmt.Errorf("explore: temporary folder: %w", err)
		}
		keep := false // the folder stays only for a violation's file, which the lab may open
		defer func() {
			if !keep {
				os.RemoveAll(sub)
			}
		}()
		db, err := b.File.Create(ctx, filepath.Join(sub, "explore.db"), false, false)
		if err != nil {
			return ui.ExploreOutcome{}, err
		}
		defer db.Close() // before the folder's removal: deferred calls run last first
		bounds := explore.DefaultBounds()
		bounds.TimeLimit = labExploreLimit
		res, err := explore.Run(ctx, explore.Config{Scenario: sc, DB: db, Bounds: bounds, TempDir: sub, Now: time.Now,
			ProgressEvery: 250 * time.Millisecond, Progress: func(st explore.Stats) { progress(st.Progress()) }})
		if err != nil {
			return ui.ExploreOutcome{}, err
		}
		if err := ctx.Err(); err != nil {
			return ui.ExploreOutcome{}, err
		}
		out, err := labOutcome(res, src, sc, sub)
		keep = out.File != "" && err == nil
		if keep {
			root.found.Store(out.File, foundCode(root, name, src, toggles, res.Violation))
		}
		return out, err
	}
}

// foundCode is the share code (without moves) of violation v, found in the scenario name with
// the lab's flags and toggles: the toggles that differ from what the flags give it are its
// settings too.
func foundCode(root *labRoot, name string, src []byte, toggles map[string]bool, v *explore.Violation) share.Code {
	o, _ := root.flags.overrides(root.fs) // checked when the lab opened
	if sc, err := root.load(name); err == nil {
		for k, on := range toggles {
			if was, err := sc.Settings.Get(k); err == nil && was != on {
				if o.Toggles == nil {
					o.Toggles = map[string]bool{}
				}
				o.Toggles[k] = on
			}
		}
	}
	lesson, file := name, []byte(nil)
	if _, _, ok := assets.Scenario(name); !ok {
		lesson, file = "", src
	}
	c := share.Counterexample(lesson, file, o, v)
	c.Moves = nil
	return c
}

// labOutcome is what the lab shows of a search: its one line, and the file of the violation it
// found (written in folder), if any.
func labOutcome(res *explore.Result, src []byte, sc *engine.Scenario, folder string) (ui.ExploreOutcome, error) {
	var text strings.Builder
	if err := res.WriteText(&text); err != nil {
		return ui.ExploreOutcome{}, err
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	if res.Violation == nil {
		for _, l := range lines {
			if strings.HasPrefix(l, "no schedule ") {
				return ui.ExploreOutcome{Line: l}, nil
			}
		}
		return ui.ExploreOutcome{Line: lines[len(lines)-1]}, nil
	}
	file := filepath.Join(folder, sc.Name+"-found.scenario")
	if err := writeFound(file, src, sc, res.Violation); err != nil {
		return ui.ExploreOutcome{}, err
	}
	return ui.ExploreOutcome{Line: strings.TrimSuffix(lines[0], ":"), File: file}, nil
}
