package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/store"
	"leaselab/store/postgres"
	"leaselab/store/storetest"
)

// observed is what a question's step did, for an oracle to read the answer from.
type observed struct {
	events []engine.Event // the events of the question's step
	rows   []engine.Row   // the outbox right after the step
	sum    *engine.Summary
}

// row is the outbox row of key after the step.
func (o observed) row(key string) engine.Row {
	for _, r := range o.rows {
		if r.IdempotencyKey == key {
			return r
		}
	}
	return engine.Row{}
}

// of returns the step's events of kind by worker.
func (o observed) of(worker string, kind engine.EventKind) []engine.Event {
	var out []engine.Event
	for _, e := range o.events {
		if e.Worker == worker && e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// oracle reads, from what a question's step did (and, for a question about the end, the run's
// summary), which answer is the truth; "" when none of the answers describes it.
type oracle struct {
	atEnd bool // the question is about the end of the run: read the summary
	read  func(o observed) string
}

// claimWord is what a worker's claim in the step got, in the words the questions use.
func claimWord(o observed, worker, taken, blocked, empty string) string {
	for _, e := range o.events {
		if e.Worker != worker {
			continue
		}
		switch {
		case e.Kind == engine.EvClaim && (e.Outcome == engine.OutcomeWon || e.Outcome == engine.OutcomeReclaimed),
			e.Kind == engine.EvSelect && e.Outcome == engine.OutcomeSelected, e.Kind == engine.EvTake,
			e.Kind == engine.EvLock && e.Outcome == engine.OutcomeLocked:
			return taken
		case e.Kind == engine.EvClaim && e.Outcome == engine.OutcomeBlocked:
			return blocked
		case e.Kind == engine.EvClaim || e.Kind == engine.EvSelect:
			return empty // found nothing claimable: Worker-A's lease hid the only row
		case e.Kind == engine.EvLoad:
			return "" // a load is not a claim: none of the answers
		}
	}
	return ""
}

// finalizeWord is what a worker's finalize in the step did: written (committed or a
// violation) or rejected.
func finalizeWord(o observed, worker, written, rejected string) string {
	for _, e := range o.of(worker, engine.EvFinalize) {
		switch e.Outcome {
		case engine.OutcomeCommitted, engine.OutcomeViolation:
			return written
		case engine.OutcomeRejected:
			return rejected
		}
	}
	return ""
}

func rowWord(r engine.Row) string {
	switch {
	case r.Status == engine.StatusPending:
		return "Pending"
	case r.Status == engine.StatusProcessing && r.LockedBy == "Worker-A":
		return "Processing, LockedBy=Worker-A"
	case r.Status == engine.StatusProcessed:
		return "Processed"
	}
	return r.Status + " " + r.LockedBy
}

// oracles are, lesson by lesson and question by question in script order, how to tell from
// the run which answer is true. They read the run, never the script's answers.
var oracles = map[string][]oracle{
	"before": {
		{read: func(o observed) string {
			for _, e := range o.of("Worker-B", engine.EvLoad) {
				return fmt.Sprint(e.Rows)
			}
			return "" // a claim is not a load: the question does not apply
		}},
		{atEnd: true, read: func(o observed) string { return fmt.Sprint(o.sum.StatusChecks) }},
	},
	"naive-claim": {
		{read: func(o observed) string { return claimWord(o, "Worker-B", "PAY-001 as well", "blocked", "blocked") }},
		{atEnd: true, read: func(o observed) string { return fmt.Sprint(o.sum.StatusChecksByKey["PAY-001"]) }},
	},
	"lease-too-short": {
		{atEnd: true, read: func(o observed) string { return finalizerOf(o, "PAY-001") }},
		{atEnd: true, read: func(o observed) string { return fmt.Sprint(o.sum.StatusChecksByKey["PAY-001"]) }},
	},
	"stale-owner": {
		{read: func(o observed) string {
			for _, e := range o.of("Worker-B", engine.EvSelect) {
				if e.Outcome == engine.OutcomeSelected {
					return "reclaims it" // the non-atomic claim's read: its UPDATE will take it
				}
			}
			for _, e := range o.of("Worker-B", engine.EvClaim) {
				switch e.Outcome {
				case engine.OutcomeReclaimed:
					return "reclaims it"
				case engine.OutcomeBlocked:
					return "blocked"
				case engine.OutcomeEmpty:
					return "finds nothing"
				}
			}
			return ""
		}},
		{read: func(o observed) string {
			for _, e := range o.of("Worker-A", engine.EvFinalize) {
				return fmt.Sprint(e.Rows)
			}
			return ""
		}},
	},
	"aba-fencing": {
		{read: func(o observed) string {
			for _, e := range o.events {
				if e.Kind == engine.EvClaim && e.Outcome != engine.OutcomeReclaimed && e.Outcome != engine.OutcomeWon {
					return "" // no claim took it: the version is not a claim's
				}
			}
			return fmt.Sprint(o.row("PAY-001").LeaseVersion)
		}},
		{read: func(o observed) string { return finalizeWord(o, "Worker-A", "yes", "no, rejected") }},
	},
	"skip-locked": {
		{read: func(o observed) string {
			for _, e := range o.of("Worker-B", engine.EvClaim) {
				switch {
				case e.Outcome == engine.OutcomeWon:
					return e.Key
				case e.Wait > 0:
					return "nothing, after a wait"
				}
			}
			return ""
		}},
		{read: func(o observed) string {
			w := rowWord(o.row("PAY-001"))
			if w == "Pending" {
				return "Pending, as before"
			}
			return w
		}},
	},
	"after": {
		{read: func(o observed) string { return rowWord(o.row("PAY-001")) }},
		{read: func(o observed) string { return claimWord(o, "Worker-B", "yes", "no, blocked", "no, blocked") }},
		{read: func(o observed) string {
			switch r := o.row("PAY-001"); {
			case r.Status == engine.StatusProcessing:
				return r.LockedBy
			case r.Status == engine.StatusPending, r.Status == engine.StatusProcessed:
				return "nobody"
			}
			return ""
		}},
	},
	"rescuer-race": {
		{read: func(o observed) string {
			switch o.row("PAY-001").Status {
			case engine.StatusProcessed:
				return "Processed"
			case engine.StatusPending:
				return "Pending again"
			}
			return ""
		}},
	},
	"clock-skew": {
		{read: func(o observed) string {
			for _, e := range o.events {
				if e.Worker != "Worker-B" {
					continue
				}
				switch {
				case e.Kind == engine.EvClaim && e.Outcome == engine.OutcomeReclaimed, e.Kind == engine.EvSelect && e.Outcome == engine.OutcomeSelected:
					return "PAY-001, taken over"
				case e.Kind == engine.EvClaim && e.Outcome == engine.OutcomeBlocked:
					return "blocked by A's lease"
				}
			}
			return ""
		}},
	},
	"dead-letter": {
		{atEnd: true, read: func(o observed) string {
			switch {
			case o.sum.DeadLettered == 1 && !o.sum.WatchdogEnded:
				return "parked as a dead letter"
			case o.sum.WatchdogEnded && o.sum.DeadLettered == 0:
				return "retried until the watchdog"
			}
			return ""
		}},
	},
	"retry-backoff": {
		{atEnd: true, read: func(o observed) string {
			if o.sum.ProviderFailures < 40 {
				return "fewer than 40"
			}
			return "40 or more"
		}},
	},
	"many-workers": {
		{atEnd: true, read: func(o observed) string {
			switch n := o.sum.ProcessedByTwoOwners; {
			case n == 0:
				return "none"
			case n <= 10:
				return "a few"
			}
			return "many"
		}},
	},
}

// finalizerOf is the last worker whose finalize of key wrote it.
func finalizerOf(o observed, key string) string {
	who := ""
	for _, e := range o.events {
		if e.Kind == engine.EvFinalize && e.Key == key && (e.Outcome == engine.OutcomeCommitted || e.Outcome == engine.OutcomeViolation) {
			who = e.Worker
		}
	}
	return who
}

// flips are the ways a test plays a lesson: as written, and with each toggle it has flipped,
// before the first step or just before each question.
type flip struct {
	toggle string // "" as written
	at     int    // -1: before the first step; else just before question at (0, 1, …)
	back   int    // with at -1, flipped back just before question back; -1: never
}

func (f flip) String() string {
	switch {
	case f.toggle == "":
		return "as-written"
	case f.at < 0 && f.back >= 0:
		return fmt.Sprintf("%s-flipped-at-start-back-before-question-%d", f.toggle, f.back+1)
	case f.at < 0:
		return f.toggle + "-flipped-at-start"
	}
	return fmt.Sprintf("%s-flipped-before-question-%d", f.toggle, f.at+1)
}

// TestAnswersAreWhatTheStepDoes plays every lesson with every toggle flipped (at the start, and
// just before the question) and checks, question by question, that the answer the lab marks
// right under the settings of that moment is what the step then does — or that the question
// is skipped with a reason. SQLite always; PostgreSQL too when LEASELAB_PG is set.
func TestAnswersAreWhatTheStepDoes(t *testing.T) {
	skipSweepUnderRace(t)
	backends := []string{"sqlite"}
	if os.Getenv("LEASELAB_PG") != "" {
		backends = append(backends, "postgres")
	}
	for _, be := range backends {
		for _, name := range assets.Names() { // every lesson, all in the lab now
			data, src, _ := assets.Scenario(name)
			sc, err := scenario.Parse(src, data)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Questions() == 0 || sc.Backend != "" && be != sc.Backend {
				continue
			}
			if len(oracles[name]) != sc.Questions() {
				t.Fatalf("%s has %d questions and %d oracles", name, sc.Questions(), len(oracles[name]))
			}
			toggles := engine.ToggleNames()
			if be == "postgres" {
				toggles = engine.AllToggleNames()
			}
			if sc.Teaches != "" && !slices.Contains(toggles, sc.Teaches) {
				toggles = append(toggles, sc.Teaches) // a lesson's own toggle the lab has no key for yet (issue 20's)
			}
			flips := []flip{{back: -1}}
			for _, tg := range toggles {
				flips = append(flips, flip{toggle: tg, at: -1, back: -1})
				for k := 0; k < sc.Questions(); k++ {
					if k > 0 || sc.Steps[0].Ask == nil { // before the first step is the start
						flips = append(flips, flip{toggle: tg, at: k, back: -1})
						// Off from the start and back on before the question (issue 28: the
						// atomic claim off for Worker-A's select, on again for Worker-B's).
						flips = append(flips, flip{toggle: tg, at: -1, back: k})
					}
				}
			}
			for _, f := range flips {
				t.Run(be+"/"+name+"/"+f.String(), func(t *testing.T) {
					playQuestions(t, be, name, f)
				})
			}
		}
	}
}

// pending is a question whose answer is read at the end of the run.
type pending struct {
	q    *engine.Question
	step int
	what string
	o    oracle
}

// stuck are the plays that cannot end, reported rather than hidden. There is none since the
// take became bounded: on PostgreSQL, with the atomic claim off while Worker-A's claim holds
// PAY-001's row lock in an open transaction, Worker-B's unconditional UPDATE used to wait for
// that lock, fail busy after lock_timeout, and be retried for ever (the script's next step,
// Worker-A's, never came); now it gives up, blocked, and the script goes on.
var stuck = map[string]bool{}

// playQuestions plays one lesson, flipped as f says, and checks every question's grade: the
// answer the engine reads from the run (Script.Observed, what the lab grades with) must be
// the one the oracle reads from the same run, independently, or none when the oracle finds
// that none of the answers describes it; under the lesson's own settings it must be the
// answer the file expects, and the question must be asked.
func playQuestions(t *testing.T, be, name string, f flip) {
	if stuck[be+"/"+name+"/"+f.String()] {
		t.Skip("skipped: a known livelock of the script (see stuck)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sc := loadScenario(t, name, "")
	s := sessionOn(t, be, sc)
	flipIt := func() {
		on, _ := s.Settings().Get(f.toggle)
		if _, err := s.Crew().SetToggle(f.toggle, !on); err != nil {
			t.Fatal(err)
		}
	}
	if f.toggle != "" && f.at < 0 {
		flipIt()
	}
	var atEnd []pending
	qi := 0
	// next is one step; the watchdog's end (a poison message retried for ever, bounded) is the
	// end of the run, as leaselab run reports it, not a failure of the play.
	watchdog := false
	next := func() {
		if _, err := s.Script().Next(ctx); errors.Is(err, engine.ErrNoProgress) {
			watchdog = true
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for !s.Script().Done() && !watchdog {
		q := s.Script().NextQuestion()
		if q == nil {
			next()
			continue
		}
		o := oracles[name][qi]
		if f.toggle != "" && (f.at == qi || f.back == qi) {
			flipIt()
		}
		qi++
		settings := s.Settings().Describe()
		_, pc, _ := s.Script().Position()
		what := fmt.Sprintf("line %d %q under %s", q.Line, q.Text, settings)
		if skip := q.For(s.Settings(), s.InitialSettings()).Skip; skip != "" && f.toggle == "" {
			t.Errorf("%s: skipped under the lesson's own settings: %s", what, skip)
		}
		before := s.Ledger().EventCount()
		for !watchdog && !s.Script().Done() {
			next()
			if _, now, _ := s.Script().Position(); now != pc {
				break
			}
		}
		if o.atEnd {
			atEnd = append(atEnd, pending{q: q, step: pc, what: what, o: o})
			if obs, _ := s.Script().Observed(pc); obs.Known && !s.Script().Done() {
				t.Errorf("%s: a question about the end graded after its step: %+v", what, obs)
			}
			continue
		}
		rows, err := s.DB().Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		obs, _ := s.Script().Observed(pc)
		gradeAgrees(t, what, q, obs, o.read(observed{events: s.Ledger().EventsSince(before), rows: rows}), f)
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if watchdog {
		s.SetWatchdogEnded(sum)
	}
	for _, p := range atEnd {
		obs, _ := s.Script().Observed(p.step)
		gradeAgrees(t, p.what, p.q, obs, p.o.read(observed{sum: sum, events: s.Ledger().Events()}), f)
	}
}

// gradeAgrees checks the engine's grade of q (obs) against the oracle's reading of the run
// (got: the true answer, "" for none).
func gradeAgrees(t *testing.T, what string, q *engine.Question, obs engine.Observed, got string, f flip) {
	t.Helper()
	if !slices.Contains(q.Answers, got) {
		got = "" // a count no answer names (10 status checks of 6 or 12): none of them is right
	}
	switch {
	case !obs.Known:
		t.Errorf("%s: not graded once what it asks about was over: %+v", what, obs)
	case got == "" && obs.Right >= 0:
		t.Errorf("%s: the engine marks %q right (%s), none of the answers describes the run", what, q.Answers[obs.Right], obs.Words)
	case got != "" && (obs.Right < 0 || q.Answers[obs.Right] != got):
		t.Errorf("%s: the engine reads %q (%s), the run did %q", what, answerOrNone(q, obs.Right), obs.Words, got)
	case f.toggle == "" && obs.Right != q.Right:
		t.Errorf("%s: as written the run makes %q right, the file expects %q", what, answerOrNone(q, obs.Right), q.Answers[q.Right])
	}
}

func answerOrNone(q *engine.Question, i int) string {
	if i < 0 {
		return "none"
	}
	return q.Answers[i]
}

var schemas atomic.Int64

// sessionOn opens a session of sc on a fresh database of backend be.
func sessionOn(t *testing.T, be string, sc *engine.Scenario) *engine.Session {
	t.Helper()
	ctx := context.Background()
	var (
		db      engine.DB
		closeDB func() error
	)
	switch be {
	case "postgres":
		pg, err := postgres.CreateTemp(ctx, storetest.PostgresURL(t), time.Now(),
			fmt.Sprintf("ask%d_%d", os.Getpid(), schemas.Add(1)))
		if err != nil {
			t.Fatal(err)
		}
		db, closeDB = pg, pg.Close
	default:
		lite, err := store.Create(ctx, filepath.Join(t.TempDir(), "leaselab.db"))
		if err != nil {
			t.Fatal(err)
		}
		db, closeDB = lite, lite.Close
	}
	s, err := engine.NewSession(ctx, sc, db)
	if err != nil {
		closeDB()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		closeDB()
	})
	return s
}
