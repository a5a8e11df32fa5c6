package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SaveTranscript writes r's transcript to a new file in dir named
// leaselab-<scenario>-<UTC time to the millisecond>.md, created with O_EXCL and mode 0600 like
// the reports (it holds payment data): a file already there is never overwritten; the next
// name gets "-2", "-3", and so on. It returns the path written.
func SaveTranscript(dir, scenario string, at time.Time, r *Report, moments map[int]Moment) (string, error) {
	stamp := strings.ReplaceAll(at.UTC().Format("20060102T150405.000Z"), ".", "")
	base := filepath.Join(dir, fmt.Sprintf("leaselab-%s-%s", safeName(scenario), stamp))
	for n := 1; n <= 1000; n++ {
		path := base + ".md"
		if n > 1 {
			path = fmt.Sprintf("%s-%d.md", base, n)
		}
		err := WriteTranscriptFile(path, r, moments)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return path, err
	}
	return "", fmt.Errorf("transcript: %s.md and 999 others like it exist already", base)
}

// WriteTranscriptFile writes r's transcript to path, which must not exist (O_EXCL, 0600). A
// transcript that cannot be written whole is removed: nothing half-written is left.
func WriteTranscriptFile(path string, r *Report, moments map[int]Moment) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("transcript %s: %w", path, err)
	}
	werr := r.WriteMarkdown(f, moments)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(path) // ours (O_EXCL)
		return fmt.Errorf("transcript %s: %w", path, err)
	}
	return nil
}

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
