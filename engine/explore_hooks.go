package engine

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"leaselab/engine/internal/keyed"
)

// What engine/explore needs of a session beyond the commands: the memory that decides what the
// session can still do (writeState, for the search's seen set), the rescuer stepped as a
// script steps it, and the clock offsets of the workers.

// Probe is what engine/explore reads of a session and the rescuer steps it takes: the
// session's state written in a fixed order (WriteStateAs), which workers are interchangeable,
// the clock offsets, and which toggles the run uses. Session.Probe makes one.
type Probe struct {
	crew     *Crew
	rescuer  *Rescuer
	provider *Provider
	sc       *Scenario
}

// writeState writes, in a fixed order, everything the session holds in memory that decides
// what it can do next and what its safety checks will say of it: the clock, the settings, each
// worker's memory (its phase, what it holds and believes, its timers, whether its last poll
// found nothing), the rescuer's read, the provider's call counts and fencing versions, the
// failures per key, and what the ledger keeps of each message (its attempts, leases, commits
// and violations). What it leaves out only counts (claims that found nothing, busy retries,
// the event log). Two sessions of one scenario that write the same state and hold the same
// rows have the same futures: engine/explore hashes it with the rows to recognise a state it
// has seen.
func (p Probe) writeState(w io.Writer) {
	fmt.Fprintf(w, "settings %+v\n", p.crew.settings.get())
	p.WriteStateAs(w, nil, nil, nil)
}

// WriteStateAs is writeState with the workers renamed, for a search that treats workers of one
// configuration as interchangeable (engine/explore's symmetry): order[k] is the index of the
// worker written k-th, name maps each worker's name (the ledger's: "Worker-A2") and id each
// LockedBy value ("Worker-A") to the one written — every place writeState writes a worker: its
// own line, the ledger's attempts and leases, the rescuer's read. nil: the workers in their
// order, their own names. Two states that differ only by such a renaming write the same text
// under the renamings that match them. It leaves out the settings, which no move of a search
// changes (writeState writes them first). The hot parts are written with strconv, not fmt: a
// search writes every state it meets once per renaming.
func (p Probe) WriteStateAs(w io.Writer, order []int, name, id func(string) string) {
	if name == nil {
		name = func(n string) string { return n }
	}
	if id == nil {
		id = name
	}
	now := p.crew.clock.Now()
	st := p.crew.settings.get()
	b := strconv.AppendInt([]byte("clock "), now.UnixMilli(), 10)
	w.Write(append(b, '\n'))
	for k := range p.crew.workers {
		i := k
		if order != nil {
			i = order[k]
		}
		p.crew.workers[i].writeState(w, st, now, name)
	}
	if r := p.rescuer; r != nil {
		fmt.Fprintf(w, "rescuer %s seen", r.Short)
		for _, e := range r.seen {
			fmt.Fprintf(w, " {%d %s %s %d %d}", e.ID, e.IdempotencyKey, id(e.LockedBy), e.LockedUntil.UnixMilli(), e.LeaseVersion)
		}
		fmt.Fprintf(w, " commits %v\n", sortedPairs(r.seenCommits))
	}
	p.provider.mu.Lock()
	p.provider.calls.Each(func(k keyed.Ref, c *uint32) {
		if *c > 0 {
			fmt.Fprintf(w, "calls %s %d\n", k, *c)
		}
	})
	p.provider.mu.Unlock()
	p.crew.env.clocks.mu.Lock()
	fmt.Fprintf(w, "fencing %v\n", sortedPairs(p.crew.env.clocks.newest))
	p.crew.env.clocks.mu.Unlock()
	if r := p.crew.env.retry; r != nil {
		r.mu.Lock()
		fmt.Fprintf(w, "failed %v\n", sortedPairs(r.failedKeys))
		r.mu.Unlock()
	}
	p.crew.ledger.writeState(w, name)
}

// writeState is the worker's part of Probe.writeState.
func (w *Worker) writeState(out io.Writer, s Settings, now time.Time, name func(string) string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := append([]byte("worker "), name(w.Name)...)
	for _, f := range []bool{w.crashed, w.paused, w.leased, w.isQuietLocked()} {
		b = strconv.AppendBool(append(b, ' '), f)
	}
	b = strconv.AppendInt(append(b, " phase="...), int64(w.phase), 10)
	b = strconv.AppendInt(append(b, " blocked="...), w.blockedTo.UnixMilli(), 10)
	out.Write(append(b, '\n'))
	if w.phase != phaseIdle {
		fmt.Fprintf(out, " held %s id %d v%d until %d; result %+v err %+v due %d renew %d\n",
			w.held.IdempotencyKey, w.held.ID, w.held.LeaseVersion, w.held.LockedUntil.UnixMilli(),
			w.result, w.perr, w.dueAt.UnixMilli(), w.renewAt.UnixMilli())
	}
	for _, m := range w.queue {
		fmt.Fprintf(out, " queued %s v%d\n", m.IdempotencyKey, m.LeaseVersion)
	}
}

// writeState is the ledger's part of Probe.writeState: per message, what the safety checks
// read of it, with each worker by its name (not by the ledger's index, which is the order the
// names were first seen in: two states that differ only there have the same futures).
func (l *Ledger) writeState(w io.Writer, name func(string) string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.msgs
	who := func(i uint16) string {
		if i == 0 || int(i) > len(m.names) {
			return "-"
		}
		return name(m.names[i-1])
	}
	fmt.Fprintf(w, "ledger base %d\n", m.base)
	var b []byte
	m.recs.Each(func(k keyed.Ref, rec *msgRec) {
		if *rec == (msgRec{}) {
			return
		}
		key := k.String()
		r := *rec
		b = append(append(b[:0], "msg "...), key...)
		for _, n := range []int64{int64(r.attemptAt), int64(r.attemptVer)} {
			b = strconv.AppendInt(append(b, ' '), n, 10)
		}
		b = append(append(b, ' '), who(r.attemptW)...)
		for _, n := range []int64{int64(r.spanAt), int64(r.spanUntil), int64(r.spanVer)} {
			b = strconv.AppendInt(append(b, ' '), n, 10)
		}
		b = append(append(b, ' '), who(r.spanW)...)
		for _, n := range []int64{int64(r.attempts), int64(r.commits), int64(r.flags), int64(m.more[key])} {
			b = strconv.AppendInt(append(b, ' '), n, 10)
		}
		w.Write(append(b, '\n'))
		if sp := m.spill[key]; sp != nil {
			fmt.Fprint(w, " spill")
			for _, a := range sp.attempts {
				fmt.Fprintf(w, " %s@%d/v%d", name(a.Worker), a.At.UnixMilli(), a.Version)
			}
			fmt.Fprintf(w, " spans %v freed %v leases", sp.spans, sp.freed)
			for _, wl := range sp.workers {
				fmt.Fprintf(w, " %s:v%d@%d", name(wl.worker), wl.held, wl.until.UnixMilli())
			}
			fmt.Fprintln(w)
		}
	})
}

// Interchangeable reports whether workers i and j have the same configuration (latency,
// slowness, clock skew): swapped, with their names, they would do the same things.
func (p Probe) Interchangeable(i, j int) bool {
	a, b := p.crew.workers[i].spec, p.crew.workers[j].spec
	return a.Latency == b.Latency && a.Slow == b.Slow && a.Skew == b.Skew
}

// WorkerNames are worker i's name (the ledger's) and id (LockedBy's).
func (p Probe) WorkerNames(i int) (name, id string) {
	w := p.crew.workers[i]
	return w.Name, w.ID
}

// sortedPairs is a map's entries in key order, for a state that must not depend on Go's map
// order.
func sortedPairs[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return out
}

// RescuerScan is the script's `R scan`: the rescuer's read of the leases that have ended.
func (p Probe) RescuerScan(ctx context.Context) error {
	if p.rescuer == nil {
		return fmt.Errorf("no rescuer in this run: %w", ErrNotNow)
	}
	return p.rescuer.scan(ctx, false)
}

// RescuerRescue is the script's `R rescue`: the rescuer's UPDATE of each lease its read
// returned (reading first when it holds none).
func (p Probe) RescuerRescue(ctx context.Context) error {
	if p.rescuer == nil {
		return fmt.Errorf("no rescuer in this run: %w", ErrNotNow)
	}
	return p.rescuer.rescue(ctx, false)
}

// Holding is how many ended leases the rescuer's last read returned that it has not yet
// written.
func (r *Rescuer) Holding() int { return len(r.seen) }

// ClockOffsets are the distinct offsets of the workers' clocks from the scenario's, 0 first:
// the times at which, by some worker's clock, a lease has ended.
func (p Probe) ClockOffsets() []time.Duration {
	out := []time.Duration{0}
	if p.crew.settings.get().DBClock {
		return out
	}
	for _, w := range p.crew.workers {
		if !slices.Contains(out, w.spec.Skew) {
			out = append(out, w.spec.Skew)
		}
	}
	return out
}
