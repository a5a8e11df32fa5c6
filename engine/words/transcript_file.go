package words

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"leaselab/engine"
	"path/filepath"
	"strings"
	"time"
)

// Files is where transcripts go, as the caller opens them (leaselab passes ui.OSFiles): the
// words open no file of their own.
type Files interface {
	// Create makes a new file at path for writing, mode 0600, and fails with an error that
	// is fs.ErrExist when there is one already (O_EXCL).
	Create(path string) (io.WriteCloser, error)
	// Remove takes away a file Create made.
	Remove(path string) error
}

// SaveTranscript writes r's transcript to a new file in dir named
// leaselab-<scenario>-<UTC time to the millisecond>.md, created with O_EXCL and mode 0600 like
// the reports (it holds payment data): a file already there is never overwritten; the next
// name gets "-2", "-3", and so on. It returns the path written.
func SaveTranscript(files Files, dir, scenario string, at time.Time, r *engine.Report, moments map[int]engine.Moment) (string, error) {
	return SaveNew(files, dir, "leaselab-"+safeName(scenario), at, func(w io.Writer) error { return WriteMarkdown(w, r, moments) })
}

// SaveNew writes a new Markdown file in dir named <prefix>-<UTC time to the millisecond>.md with
// write: created with O_EXCL and mode 0600, never over a file already there (the next name gets
// "-2", "-3", and so on), and removed when it cannot be written whole. It returns the path
// written. prefix is the caller's, never a name from the outside.
func SaveNew(files Files, dir, prefix string, at time.Time, write func(io.Writer) error) (string, error) {
	base, err := saveUnder(dir, prefix, at, func(base string) error { return writeNew(files, base+".md", write) })
	return mdPath(base), err
}

// mdPath is the transcript's path of a base name, "" for none.
func mdPath(base string) string {
	if base == "" {
		return ""
	}
	return base + ".md"
}

// SaveTranscriptPictured is SaveTranscript with the run's picture beside the transcript: the
// same name with .svg, written by picture first, then the Markdown, which shows it. Both names
// must be new; a transcript that cannot be written takes its picture away with it. It returns
// the transcript's path.
func SaveTranscriptPictured(files Files, dir, scenario string, at time.Time, r *engine.Report, moments map[int]engine.Moment,
	picture func(io.Writer) error) (string, error) {
	base, err := saveUnder(dir, "leaselab-"+safeName(scenario), at, func(base string) error {
		pic := base + ".svg"
		if err := writeNew(files, pic, picture); err != nil {
			return err
		}
		pictured := *r
		pictured.Picture = filepath.Base(pic)
		if err := writeNew(files, base+".md", func(w io.Writer) error { return WriteMarkdown(w, &pictured, moments) }); err != nil {
			files.Remove(pic) // ours (O_EXCL), and of no use without its transcript
			return err
		}
		return nil
	})
	return mdPath(base), err
}

// saveUnder calls save with the first name <dir>/<prefix>-<UTC time to the millisecond>, then
// with "-2", "-3", and so on, for as long as save finds a file there (fs.ErrExist), and
// returns the name it saved under.
func saveUnder(dir, prefix string, at time.Time, save func(base string) error) (string, error) {
	stamp := strings.ReplaceAll(at.UTC().Format("20060102T150405.000Z"), ".", "")
	first := filepath.Join(dir, fmt.Sprintf("%s-%s", prefix, stamp))
	for n := 1; n <= 1000; n++ {
		base := first
		if n > 1 {
			base = fmt.Sprintf("%s-%d", first, n)
		}
		err := save(base)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return base, err
	}
	return "", fmt.Errorf("transcript: %s.md and 999 others like it exist already", first)
}

// WriteTranscriptFile writes r's transcript to path in files, which must not exist (O_EXCL, 0600). A
// transcript that cannot be written whole is removed: nothing half-written is left.
func WriteTranscriptFile(files Files, path string, r *engine.Report, moments map[int]engine.Moment) error {
	return writeNew(files, path, func(w io.Writer) error { return WriteMarkdown(w, r, moments) })
}

// writeNew creates path in files (O_EXCL, 0600) and writes it with write; a file that cannot be
// written whole is removed.
func writeNew(files Files, path string, write func(io.Writer) error) error {
	f, err := files.Create(path)
	if err != nil {
		return fmt.Errorf("transcript %s: %w", path, err)
	}
	werr := write(f)
	if err := errors.Join(werr, f.Close()); err != nil {
		files.Remove(path) // ours (O_EXCL)
		return fmt.Errorf("transcript %s: %w", path, err)
	}
	return nil
}

// SafeName keeps a name usable in a file name: letters, digits, '-' and '_'.
func SafeName(s string) string { return safeName(s) }

// safeName keeps a scenario name usable in a file name: letters, digits, '-' and '_'.
func safeName(s string) string {
	out := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, s)
	if out == "" {
		return "scenario"
	}
	return out
}
