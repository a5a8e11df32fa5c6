package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"leaselab/engine"
	"leaselab/ui/diagram"
)

// Runs as pictures: run --diagram FILE.svg (the space-time diagram, as the lab draws it with
// t, drawn whole as SVG), the same picture beside a --transcript, and run --cast FILE (cast.go).

// PictureEvents is how many of a run's latest events its picture draws: as many as the lab's
// diagram holds (its frame's events), so that the picture is the lab's diagram of the run.
const PictureEvents = 200

// diagramInput is what the lab's diagram (t) would draw of the run rep reports: its scenario,
// its workers as lanes, and its latest events.
func diagramInput(rep *engine.Report) diagram.Input {
	events := rep.Events
	if n := len(events); n > PictureEvents {
		events = events[n-PictureEvents:]
	}
	return diagram.Input{Name: rep.Summary.Scenario, Events: events, Workers: rep.Workers, Dropped: len(rep.Events) - len(events)}
}

// newFileFree checks, before the run, that flag's path names a new file in a folder that
// exists: a file (or a folder) already there is never overwritten (exit 2); a folder that is
// missing is the environment's (exit 3).
func newFileFree(flag, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Lstat(path); err == nil {
		if st.IsDir() {
			return usageError{fmt.Errorf("%s %s: a folder; name a new file in it", flag, path)}
		}
		return usageError{fmt.Errorf("%s %s: the file exists; it is never overwritten (remove it or pick a new name)", flag, path)}
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s %s: the folder %s does not exist or is not a folder", flag, path, dir)
	}
	return nil
}

// writeNewFile writes path, which must not exist, whole or not at all: into a temporary file
// beside it (mode 0600, like the reports: it names payment keys), then linked into place, which
// fails rather than replace a file that appeared meanwhile. flag names the flag in errors.
func writeNewFile(flag, path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	defer os.Remove(tmp.Name()) // after the link, or when anything failed: never left behind
	werr := write(tmp)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return usageError{fmt.Errorf("%s %s: the file exists; it is never overwritten (remove it or pick a new name)", flag, path)}
		}
		// A file system without hard links: rename, once more sure that nothing is there.
		if _, serr := os.Lstat(path); serr == nil {
			return usageError{fmt.Errorf("%s %s: the file exists; it is never overwritten (remove it or pick a new name)", flag, path)}
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return fmt.Errorf("%s %s: %w", flag, path, err)
		}
	}
	return nil
}

// writeDiagram writes the run's space-time diagram to path, a new file, as SVG.
func writeDiagram(flag, path string, rep *engine.Report) error {
	return writeNewFile(flag, path, func(w io.Writer) error { return diagram.WriteSVG(w, diagramInput(rep)) })
}

// transcriptPicture is the file of the picture beside a transcript: its name with .svg for .md.
func transcriptPicture(transcript string) string {
	if transcript == "" {
		return ""
	}
	if ext := filepath.Ext(transcript); strings.EqualFold(ext, ".md") {
		return strings.TrimSuffix(transcript, ext) + ".svg"
	}
	return transcript + ".svg"
}

// defaultCastSize is the --cast screen's size: the lab at a size a slide or a player shows.
const defaultCastSize = "100x30"

// parseCastSize reads --cast-size WIDTHxHEIGHT: at least the lab's 80x24, at most 400x200.
func parseCastSize(s string) (w, h int, err error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	if ok {
		_, err1 := fmt.Sscan(ws, &w)
		_, err2 := fmt.Sscan(hs, &h)
		ok = err1 == nil && err2 == nil && fmt.Sprintf("%dx%d", w, h) == strings.ToLower(s)
	}
	if !ok || w < 80 || h < 24 || w > 400 || h > 200 {
		return 0, 0, usageError{fmt.Errorf("--cast-size %q: want WIDTHxHEIGHT, from 80x24 (the lab's least) to 400x200, e.g. %s", s, defaultCastSize)}
	}
	return w, h, nil
}
