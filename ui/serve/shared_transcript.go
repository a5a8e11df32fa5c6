package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// The teacher's w writes the room's run as a Markdown transcript on the server's side: into the
// folder the server was given (Shared.Transcripts), under a name the server makes —
// leaselab-room-<scenario>-<UTC time>.md, created with O_EXCL and mode 0600, "-2" and so on
// when taken — never a name anyone typed, and at most Shared.MaxTranscripts of them a run. A
// transcript that cannot be written whole is removed.

// writeTranscript writes one transcript and says where, or why not.
func (sr *sharedRoom) writeTranscript(ctx context.Context) string {
	sr.mu.Lock()
	if sr.written >= sr.cfg.MaxTranscripts {
		sr.mu.Unlock()
		return fmt.Sprintf("not written: this server has written %d transcripts, the most it writes", sr.cfg.MaxTranscripts)
	}
	sr.written++
	sr.mu.Unlock()
	if sr.cfg.Files == nil || sr.cfg.Transcripts == "" {
		return "not written: this server has no folder for transcripts"
	}
	at := sr.s.cfg.Now().UTC()
	stamp := strings.ReplaceAll(at.Format("20060102T150405.000Z"), ".", "")
	scenario := "room"
	if f := sr.latest(); f != nil {
		scenario = safeFileWord(f.Scenario)
	}
	base := filepath.Join(sr.cfg.Transcripts, fmt.Sprintf("leaselab-room-%s-%s", scenario, stamp))
	for n := 1; n <= 100; n++ {
		path := base + ".md"
		if n > 1 {
			path = fmt.Sprintf("%s-%d.md", base, n)
		}
		w, err := sr.cfg.Files.Create(path)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "not written: " + err.Error()
		}
		werr := sr.room.WriteTranscript(ctx, w, at)
		if err := errors.Join(werr, w.Close()); err != nil {
			sr.cfg.Files.Remove(path)
			return "not written: " + err.Error()
		}
		sr.s.log.Printf("the room's transcript written to %s", path)
		return "the room's transcript is written: " + path
	}
	return "not written: " + base + ".md and 99 others like it exist"
}

// safeFileWord keeps letters, digits, '-' and '_' of a scenario's name, for a file name.
func safeFileWord(s string) string {
	out := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, s)
	if out == "" {
		return "room"
	}
	return out
}
