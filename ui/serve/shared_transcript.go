package serve

import (
	"context"
	"fmt"
	"io"

	"leaselab/engine/words"
)

// The teacher's w writes the room's run as a Markdown transcript on the server's side: into the
// folder the server was given (Shared.Transcripts), under a name the server makes —
// leaselab-room-<scenario>-<UTC time>.md, created with O_EXCL and mode 0600, "-2" and so on
// when taken (words.SaveNew) — never a name anyone typed, and at most Shared.MaxTranscripts of
// them a run. A transcript that cannot be written whole is removed.

// writeTranscript writes one transcript and says where, or why not.
func (sr *sharedRoom) writeTranscript(ctx context.Context) string {
	if sr.cfg.Files == nil || sr.cfg.Transcripts == "" {
		return "not written: this server has no folder for transcripts"
	}
	sr.mu.Lock()
	if sr.written >= sr.cfg.MaxTranscripts {
		sr.mu.Unlock()
		return fmt.Sprintf("not written: this server has written %d transcripts, the most it writes", sr.cfg.MaxTranscripts)
	}
	sr.written++
	sr.mu.Unlock()
	at := sr.s.cfg.Now().UTC()
	scenario := "room"
	if f := sr.latest(); f != nil {
		scenario = f.Scenario
	}
	path, err := words.SaveNew(sr.cfg.Files, sr.cfg.Transcripts, "leaselab-room-"+words.SafeName(scenario), at,
		func(w io.Writer) error { return sr.room.WriteTranscript(ctx, w, at) })
	if err != nil {
		return "not written: " + err.Error()
	}
	sr.s.log.Printf("the room's transcript written to %s", path)
	return "the room's transcript is written: " + path
}
