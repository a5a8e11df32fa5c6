package room

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"leaselab/engine/words"
)

// WriteTranscript writes the room's run as Markdown: the scoreboard and who did what, then the
// engine's transcript of the session (words.WriteMarkdown: the settings, every event in words,
// the ledgers, the checks and the verdict). runAt is the wall-clock time for its header. The
// caller chooses the file (the server's side, never a name an attendee gave).
func (r *Room) WriteTranscript(ctx context.Context, out io.Writer, runAt time.Time) error {
	f, err := r.Frame(ctx, FrameOptions{Summary: true})
	if err != nil {
		return err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	schema := ""
	if b, ok := r.sess.DB().(interface {
		Schema(ctx context.Context) (string, error)
	}); ok {
		if schema, err = b.Schema(ctx); err != nil {
			return fmt.Errorf("transcript: %w", err)
		}
	}
	rep, err := r.sess.BuildReport(ctx, schema, runAt, "the room's database")
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The room plays the workers: %s (round %d)\n\n", md(f.Scenario), f.Round)
	fmt.Fprintf(&b, "**%s**\n\n", md(f.Board.Headline))
	for _, l := range f.Board.Lines {
		fmt.Fprintf(&b, "- %s\n", md(l))
	}
	b.WriteString("\n| attendee | claims won | reclaims | provider calls | finalized | refused | violations | processed |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range f.Seats {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %s |\n", md(s.Name), s.Claims, s.Reclaims, s.Processed,
			s.Finalized, s.Refused, s.Violations, md(strings.Join(s.Keys, " ")))
	}
	if q := f.Question; q != nil {
		fmt.Fprintf(&b, "\nThe last question: %s\n\n", md(q.Text))
		for i, a := range q.Answers {
			fmt.Fprintf(&b, "- %s: %d\n", md(a), q.Counts[i])
		}
	}
	b.WriteString("\n")
	if _, err := io.WriteString(out, b.String()); err != nil {
		return err
	}
	return words.WriteMarkdown(out, rep, nil)
}

// md escapes text for a Markdown line: the room's words are escaped already (names, questions),
// and | and the characters Markdown reads are shown as they are.
func md(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", "[", `\[`).Replace(s)
}
