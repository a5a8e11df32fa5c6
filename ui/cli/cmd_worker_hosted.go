package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
)

// maxSlots is the most slots a hosted worker takes: each is a goroutine and a message held.
const maxSlots = 1000

// checkSlots refuses --slots out of range, and the flags a hosted worker does not have: it always
// claims atomically, finalizes guarded and fenced and renews its leases, so the toggles do not
// apply, nor --sql (one statement serves several messages) or --hold-finalize.
func checkSlots(fs *flag.FlagSet, slots int) error {
	if slots == 0 {
		return nil
	}
	if slots < 0 || slots > maxSlots {
		return usageError{fmt.Errorf("--slots %d: want 1 to %d", slots, maxSlots)}
	}
	var bad string
	fs.Visit(func(f *flag.Flag) {
		if _, err := engine.DefaultSettings().Get(f.Name); err == nil || f.Name == "sql" || f.Name == "hold-finalize" {
			bad = f.Name
		}
	})
	if bad != "" {
		return usageError{fmt.Errorf("--%s: a hosted worker (--slots) always claims in batches and finalizes guarded and fenced; it takes no --%s", bad, bad)}
	}
	return nil
}

// runHosted runs the session's worker as a hosted worker of n slots, printing its events, each
// fetch and each completer batch, and at the end what it did.
func runHosted(ctx context.Context, sess *engine.Session, n int, pace, poll time.Duration, untilEmpty bool, stdout io.Writer) error {
	var mu sync.Mutex // one line at a time, from the fetcher, the completer and the heartbeat
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stdout, format+"\n", args...)
	}
	name := sess.Workers()[0].Name
	process := func(ctx context.Context, m engine.Message) (engine.ProviderResult, error) {
		if pace > 0 {
			select {
			case <-ctx.Done():
				return engine.ProviderResult{}, ctx.Err()
			case <-time.After(pace):
			}
		}
		return sess.Provider().CheckPaymentStatus(m.IdempotencyKey), nil
	}
	say("%s %s hosted: %d slots, one fetcher, one completer, lease %s", engine.FormatClock(time.Now()), name, n, sess.Settings().Lease)
	stopped, told := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(told)
		select {
		case <-ctx.Done():
			say("%s %s stopping: no more fetches; the calls under way finish, what was not started is released", engine.FormatClock(time.Now()), name)
		case <-stopped:
		}
	}()
	st, err := sess.Host(ctx, engine.HostOptions{Slots: n, Poll: poll, UntilEmpty: untilEmpty, Process: process,
		OnEvent: func(e engine.Event) { say("%s", words.Escape(e.String())) },
		OnFetch: func(free int, got []engine.Message) {
			say("%s %s fetched %d for %d free %s in one claim: %s", engine.FormatClock(time.Now()), name, len(got), free,
				plural(free, "slot"), keyRange(got))
		},
		OnBatch: func(reqs []engine.FinalizeRequest, res []engine.FinalizeResult) {
			ok := 0
			for _, r := range res {
				if r.Committed {
					ok++
				}
			}
			say("%s %s completer: %d %s in one transaction, %d committed, %d rejected", engine.FormatClock(time.Now()), name,
				len(reqs), plural(len(reqs), "finalize"), ok, len(reqs)-ok)
		}})
	close(stopped)
	<-told
	say("%s done: %d slots, %d fetches (%d claimed), %d batches (largest %d), %d finalized, %d rejected, %d released, %d heartbeats (%d lost), %d busy retries",
		name, n, st.Fetches, st.Claimed, st.Batches, st.MaxBatch, st.Finalized, st.Rejected, st.Released, st.Renewed, st.LostLeases, st.BusyRetries)
	return err
}

// keyRange names the messages of a fetch: "PAY-001", or "PAY-001 … PAY-004".
func keyRange(ms []engine.Message) string {
	first, last := words.Escape(ms[0].IdempotencyKey), words.Escape(ms[len(ms)-1].IdempotencyKey)
	if len(ms) == 1 {
		return first
	}
	return first + " … " + last
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
