package engine

import (
	"context"
	"time"
)

// Report is a finished run, ready to print: what the lesson's reports print.
type Report struct {
	Summary *Summary
	Events  []Event
	// Rows are the outbox rows at the end, the first maxReportRows of them by Id; RowsTotal
	// counts them all.
	Rows      []Row
	RowsTotal int
	Ledgers   map[string]WorkerLedger
	Workers   []string
	Explain   []string
	Incident  *Incident // the lesson's incident card, nil for most (incident.go)
	Schema    string
	RunAt     time.Time            // wall-clock time of the run, for the header only
	DBNote    string               // how the database file is kept ("temporary, removed at exit")
	Attempts  map[string][]Attempt // the processing attempts of the keys of Rows
	// SQL prints, under each timeline line, the statements its action ran (run --sql; the
	// session must trace: Session.TraceSQL).
	SQL bool
	// Questions are the lab's questions answered so far, by where they were asked, for the
	// transcript (none in a headless run).
	Questions []Asked
	// Picture is the file name, beside the transcript, of the run's space-time diagram as a
	// picture (run --transcript writes it), for the transcript to link; "" when there is none.
	Picture string
}

// BuildReport collects a finished session's report. schema is the database's CREATE statements.
func (s *Session) BuildReport(ctx context.Context, schema string, runAt time.Time, dbNote string) (*Report, error) {
	return s.view().report(ctx, schema, runAt, dbNote)
}

// report is BuildReport.
func (v *runView) report(ctx context.Context, schema string, runAt time.Time, dbNote string) (*Report, error) {
	sum, err := v.summarize(ctx)
	if err != nil {
		return nil, err
	}
	var rows []Row
	total := 0
	err = v.db.EachRow(ctx, func(row Row) error {
		if total++; len(rows) < maxReportRows {
			rows = append(rows, row)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r := &Report{Summary: sum, Events: v.ledger.Events(), Rows: rows, RowsTotal: total, Ledgers: map[string]WorkerLedger{},
		Explain: v.sc.Explain, Incident: v.sc.Incident, Schema: schema, RunAt: runAt, DBNote: dbNote, Attempts: v.ledger.attemptsFor(rows)}
	for _, w := range v.workers {
		r.Workers = append(r.Workers, w.Name)
		r.Ledgers[w.Name] = v.ledger.Worker(w.Name)
	}
	return r, nil
}

// maxReportRows is how many outbox rows a report lists; a larger run's report counts the rest.
const maxReportRows = 1000

// Asked is a question the lab asked and the answer given, for the transcript: where it was
// asked (before the event BeforeSeq, before script step Step), what it asked, what was picked,
// and the answer the run gave (Observed: not Known while the step, or the run for a question
// about the end, is not over).
type Asked struct {
	BeforeSeq int
	Step      int
	Question  *Question
	Picked    int // the answer given (an index of Question.Answers)
	Observed  Observed
}

// Right reports whether the answer given is the one the run made right; false while it is not
// known, and when none of the answers describes what happened.
func (a Asked) Right() bool {
	return a.Observed.Known && a.Observed.Right >= 0 && a.Picked == a.Observed.Right
}
