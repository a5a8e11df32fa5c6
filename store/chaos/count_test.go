package chaos

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// result is one row of the table: what a run counted.
type result struct {
	system, fault string
	seed          int64
	plan          string // the faults as carried out
	skipped       string // why the fault does not apply to the system ("" when it ran)

	completed, lost, late int // lost: never completed, and never will be; late: not completed by the end, still queued
	again, extra          int // messages whose provider was called more than once, and the calls past the first
	stale                 int // completions by an attempt that no longer owned the message
	twice                 int // messages whose payment was written twice or more
	unwitnessed           int // completed messages without a payment write seen (the witness's own check)
	drained               bool
	drain, waited         time.Duration // from the last fault's end to the last completion; to the end of the run
	rate                  float64       // messages completed per second, from the start to the last completion
	restarts              int
	notes                 []string
}

// count reads run r's counts from the ledger.
func count(l *ledger, r *run) (result, error) {
	res := result{system: r.sys.name(), fault: string(r.fault), seed: r.seed}
	l.mu.Lock()
	defer l.mu.Unlock()
	qs := []struct {
		q    string
		dest []any
	}{
		{`SELECT count(CASE WHEN completed THEN 1 END), count(CASE WHEN NOT completed AND dead THEN 1 END),
		         count(CASE WHEN NOT completed AND NOT dead THEN 1 END) FROM finals WHERE run = ?1`,
			[]any{&res.completed, &res.lost, &res.late}},
		{`SELECT count(*), coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM calls WHERE run = ?1 GROUP BY key HAVING count(*) > 1)`,
			[]any{&res.again, &res.extra}},
		// A completion is stale when its writer no longer owned the message as the write's own
		// transaction saw it (leaselab on PostgreSQL: the lease version as of its commit, in the
		// WAL; River: the job running this attempt; goqite: the message there, received by this
		// attempt), or when its writer's attempt is older than the message's newest: as that
		// transaction read it, as the system holds it after the run (leaselab's LeaseVersion: a
		// Processed row is never claimed again; River's attempt), or as the provider saw it called.
		{`SELECT count(*) FROM writes w WHERE run = ?1 AND (w.owned = 0 OR w.attempt < max(
		      coalesce(w.current, 0),
		      coalesce((SELECT f.attempt FROM finals f WHERE f.run = w.run AND f.key = w.key), 0),
		      coalesce((SELECT max(c.attempt) FROM calls c WHERE c.run = w.run AND c.key = w.key), 0)))`,
			[]any{&res.stale}},
		{`SELECT count(*) FROM (SELECT key FROM writes WHERE run = ?1 GROUP BY key HAVING count(DISTINCT attempt || '/' || worker) > 1)`,
			[]any{&res.twice}},
		{`SELECT count(*) FROM finals f WHERE run = ?1 AND completed AND NOT EXISTS (SELECT 1 FROM writes w WHERE w.run = f.run AND w.key = f.key)`,
			[]any{&res.unwitnessed}},
	}
	for _, q := range qs {
		if err := l.db.QueryRow(q.q, r.id).Scan(q.dest...); err != nil {
			return res, fmt.Errorf("count %s: %w", r.id, err)
		}
	}
	return res, nil
}

// writeTable writes the results as a Markdown table, then the runs that were not made and why.
func writeTable(w io.Writer, results []result) {
	fmt.Fprintln(w, "| system | fault | seed | lost | not done at the end | run more than once (extra calls) | stale completions | paid twice | drained after the last fault | msgs/s | restarts | faults |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|")
	var skipped, notes []string
	for _, r := range results {
		for i, n := range r.notes {
			if i == 2 && len(r.notes) > 3 {
				notes = append(notes, fmt.Sprintf("- %s × %s: … and %d more like these", r.system, r.fault, len(r.notes)-2))
				break
			}
			notes = append(notes, fmt.Sprintf("- %s × %s: %s", r.system, r.fault, n))
		}
		if r.skipped != "" {
			skipped = append(skipped, fmt.Sprintf("- %s × %s: not run (%s)", r.system, r.fault, r.skipped))
			continue
		}
		drain := "in " + r.drain.Round(100*time.Millisecond).String()
		switch {
		case r.fault == string(faultNone):
			drain = "(no fault: all done in " + r.drain.Round(100*time.Millisecond).String() + ")"
		case r.drain == 0:
			drain = "before it ended"
		}
		if !r.drained {
			drain = fmt.Sprintf("**no**: %d of %d done %s after", r.completed, messages, r.waited.Round(time.Second))
		}
		stale := fmt.Sprint(r.stale)
		if r.unwitnessed > 0 {
			stale += fmt.Sprintf(" (%d completed unseen)", r.unwitnessed)
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d (%d) | %s | %d | %s | %.0f | %d | %s |\n",
			r.system, r.fault, r.seed, r.lost, r.late, r.again, r.extra, stale, r.twice, drain, r.rate, r.restarts, r.plan)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, strings.Join(notes, "\n"))
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, strings.Join(skipped, "\n"))
	}
}
