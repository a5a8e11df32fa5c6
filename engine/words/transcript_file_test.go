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

// The picture goes beside the transcript under the same name, the Markdown shows it, and a name
// whose picture is there already is passed over as a transcript's is.
func TestSaveTranscriptPictured(t *testing.T) {
	files, at := memFiles{}, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rep := &engine.Report{Summary: &engine.Summary{}}
	files["dir/leaselab-after-20261201T100000000Z.svg"] = &bytes.Buffer{} // someone's picture
	picture := func(w io.Writer) error { _, err := io.WriteString(w, "<svg/>"); return err }
	p, err := SaveTranscriptPictured(files, "dir", "after", at, rep, nil, picture)
	if err != nil || p != "dir/leaselab-after-20261201T100000000Z-2.md" {
		t.Fatalf("saved %q, %v", p, err)
	}
	if files["dir/leaselab-after-20261201T100000000Z-2.svg"].String() != "<svg/>" {
		t.Errorf("files %v", files)
	}
	if md := files[p].String(); !bytes.Contains([]byte(md), []byte("](leaselab-after-20261201T100000000Z-2.svg)")) {
		t.Errorf("the transcript does not show its picture:\n%s", md)
	}
	if rep.Picture != "" {
		t.Errorf("the caller's report was changed: Picture %q", rep.Picture)
	}
	// A picture that cannot be written leaves no transcript.
	_, err = SaveTranscriptPictured(files, "dir", "before", at, rep, nil, func(io.Writer) error { return fs.ErrPermission })
	if err == nil || len(files) != 3 {
		t.Errorf("err %v, files %v", err, files)
	}
}
