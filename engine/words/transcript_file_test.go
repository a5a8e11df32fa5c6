package words

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"testing"
	"time"

	"leaselab/engine"
)

// memFiles are files in memory, for the transcript's tests: Create refuses a path that is there.
type memFiles map[string]*bytes.Buffer

func (m memFiles) Create(path string) (io.WriteCloser, error) {
	if _, ok := m[path]; ok {
		return nil, fmt.Errorf("open %s: %w", path, fs.ErrExist)
	}
	m[path] = &bytes.Buffer{}
	return nopCloser{m[path]}, nil
}

func (m memFiles) Remove(path string) error { delete(m, path); return nil }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Two saves in the same millisecond get two files: a file there already is never overwritten.
func TestSaveTranscriptNeverOverwrites(t *testing.T) {
	files, at := memFiles{}, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rep := &engine.Report{Summary: &engine.Summary{}}
	p1, err1 := SaveTranscript(files, "dir", "stale-owner", at, rep, nil)
	p2, err2 := SaveTranscript(files, "dir", "stale/owner", at, rep, nil)
	if err1 != nil || err2 != nil {
		t.Fatalf("saves: %q %v, %q %v", p1, err1, p2, err2)
	}
	if p1 != "dir/leaselab-stale-owner-20261201T100000000Z.md" || p2 != "dir/leaselab-stale-owner-20261201T100000000Z-2.md" {
		t.Errorf("paths %s, %s", p1, p2)
	}
	if len(files) != 2 || files[p1].Len() == 0 {
		t.Errorf("files %v", files)
	}
}
