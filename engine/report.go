package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Summary is everything a run counted, from the ledgers and from the database, with the safety
// checks, the expectations and the verdict. It is what `leaselab run --json` prints.
type Summary struct {
	Scenario              string            `json:"scenario"`
	Title                 string            `json:"title"`
	Database              string            `json:"database"`
	Settings              map[string]string `json:"settings"`
	Messages              int               `json:"messages"`
	ProcessingAttempts    int               `json:"processing_attempts"`
	UniqueProcessed       int               `json:"unique_processed"`
	ProcessedMoreThanOnce int               `json:"processed_more_than_once"`
	// ReprocessedAfterLostLease and ProcessedByTwoOwners split ProcessedMoreThanOnce (see
	// Repeats): again after a lost lease (at-least-once), or by two owners at once (a failure).
	ReprocessedAfterLostLease int `json:"reprocessed_after_lost_lease"`
	ProcessedByTwoOwners      int `json:"processed_by_two_owners"`
	// ReprocessedBySameWorker splits off the messages processed again by the one worker that
	// had processed them, each time under a lease of its own (Repeats.SameWorker).
	ReprocessedBySameWorker int `json:"reprocessed_by_same_worker,omitempty"`
	// ReprocessedKeys are the keys of ReprocessedAfterLostLease and ReprocessedBySameWorker, sorted: every one, for a screen
	// that marks them; the JSON has the first MaxExamples (MarshalJSON).
	ReprocessedKeys       []string `json:"reprocessed_keys,omitempty"`
	FinalizedMoreThanOnce int      `json:"finalized_more_than_once"`
	StatusChecks          int      `json:"status_checks"`
	// StatusChecksByKey are the status checks of every key checked more than once, and of the
	// keys the scenario's expectations name (status_checks[KEY]); the JSON has those the
	// expectations name and the first MaxExamples of the others (MarshalJSON).
	// KeysCheckedMoreThanOnce counts the keys checked more than once.
	StatusChecksByKey       map[string]int `json:"status_checks_by_key"`
	KeysCheckedMoreThanOnce int            `json:"keys_checked_more_than_once"`
	RowsLoaded              int            `json:"rows_loaded"`
	ClaimsWon               int            `json:"claims_won"`
	ClaimsEmpty             int            `json:"claims_empty"`
	ClaimsBlocked           int            `json:"claims_blocked"`
	ClaimsBackoff           int            `json:"claims_backoff,omitempty"` // claims that found work only waiting for its backoff
	LockWaits               int            `json:"lock_waits"`               // claims that waited for a row lock (skip-locked off)
	LockWaitedMS            int64          `json:"lock_waited_ms"`           // how long they waited, in all
	// Backend is the kind of database the lesson needs ("" for any; "postgres").
	Backend               string         `json:"backend,omitempty"`
	Reclaims              int            `json:"reclaims"`
	OwnershipViolations   int            `json:"ownership_violations"`
	RejectedFinalizes     int            `json:"rejected_finalizes"`
	BusyRetries           int            `json:"busy_retries"`
	ProcessedByWorker     map[string]int `json:"processed_by_worker"`
	LoadedByWorker        map[string]int `json:"loaded_by_worker"`
	Payments              PaymentCounts  `json:"payments"`
	Outbox                OutboxCounts   `json:"outbox"`
	DuplicateRows         int            `json:"duplicate_rows"`
	CreationCalls         int            `json:"creation_calls"`
	CreationCallsInWorker int            `json:"creation_calls_in_workers"`
	Lost                  int            `json:"lost"`
	// DeadLettered, ProviderFailures, Retries and ProviderCalls are a run's failures (issue
	// 20): the messages parked (not lost), the provider calls that failed, the failed attempts
	// released to be retried, and the provider calls per 100 ms. All empty in a run without
	// failures, whose JSON is as before.
	DeadLettered     int `json:"dead_lettered,omitempty"`
	ProviderFailures int `json:"provider_failures,omitempty"`
	Retries          int `json:"retries,omitempty"`
	RejectedFails    int `json:"rejected_fails,omitempty"`
	// OutageCalls are the provider calls made while the provider was down (an outage); a run
	// with an outage has the outage-waited-out check on them (report_retry.go).
	OutageCalls   int          `json:"outage_calls,omitempty"`
	ProviderCalls []CallBucket `json:"provider_calls_per_100ms,omitempty"`
	// WatchdogEnded: the run was ended by the watchdog (ErrNoProgress); SetWatchdogEnded says
	// so once the command knows.
	WatchdogEnded bool `json:"watchdog_ended,omitempty"`
	// DidNotFinish says in words why the run did not finish, when the watchdog ended it:
	// "watchdog after 10000 actions without progress (5 finalized in all): the provider failed …".
	DidNotFinish string `json:"-"`
	// Recovery is the lease-expiry proof of the first MaxExamples crashes of a worker that held
	// a message (Ledger.Recoveries has all); CrashedOwners counts those crashes, Recovered the
	// ones whose message was reclaimed after expiry and processed once, and
	// ProcessedAgainAfterReclaim the ones whose message was processed more than once after.
	Recovery                   []Recovery     `json:"recovery"`
	CrashedOwners              int            `json:"crashed_owners"`
	Recovered                  int            `json:"recovered"`
	ProcessedAgainAfterReclaim int            `json:"processed_again_after_reclaim"`
	Checks                     []Check        `json:"checks"`
	Expectations               []ExpectResult `json:"expectations"`
	ExpectationsMet            bool           `json:"expectations_met"`
	// ExpectationsNotJudged says why the expectations were not judged (a person took the run
	// off its script: a toggle switched mid-run, a crash by hand, …; offscript.go); "" when
	// they were. ExpectationsMet is then false, and means nothing.
	ExpectationsNotJudged string `json:"expectations_not_judged,omitempty"`
	Passed                bool   `json:"passed"`
	Verdict               string `json:"verdict"`
	ReportFile            string `json:"report_file,omitempty"`
	Questions             int    `json:"questions"` // the script's questions, which run ignores
	// Rescuer is what the rescuer did, when the run has one; Clocks what skewed clocks and
	// provider fencing did, when a clock is off or the provider fences (rescuer.go, skew.go).
	Rescuer *RescuerSummary `json:"rescuer,omitempty"`
	Clocks  *ClockSummary   `json:"clocks,omitempty"`

	named []string // the keys the expectations name in status_checks[KEY], sorted
}

// MarshalJSON writes the summary with its per-key lists cut to their first MaxExamples: the
// JSON's size does not grow with the run; its counts cover every key.
func (sum Summary) MarshalJSON() ([]byte, error) {
	type plain Summary // the fields, without this method
	p := plain(sum)
	p.ReprocessedKeys = sum.ReprocessedKeys[:min(len(sum.ReprocessedKeys), MaxExamples)]
	if sum.StatusChecksByKey != nil {
		p.StatusChecksByKey = map[string]int{}
		others := 0
		for _, k := range sortedKeys(sum.StatusChecksByKey) {
			if _, named := slices.BinarySearch(sum.named, k); named || others < MaxExamples {
				p.StatusChecksByKey[k] = sum.StatusChecksByKey[k]
				if !named {
					others++
				}
			}
		}
	}
	return json.Marshal(p)
}

// MaxExamples is how many keys, crashes or check details a summary lists where a run may have
// one per message: the first ones, with a count of all. A summary's size does not grow with the
// run.
const MaxExamples = 5

// PaymentCounts are the payments by status.
type PaymentCounts struct {
	Paid    int `json:"paid"`
	Failed  int `json:"failed"`
	Pending int `json:"pending"`
}

// OutboxCounts are the outbox rows by status.
type OutboxCounts struct {
	Processed  int `json:"processed"`
	Pending    int `json:"pending"`
	Processing int `json:"processing"`
}

// Check is one safety check.
type Check struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Short is the name in fewer words, for a screen too narrow for Name ("" when Name is short
	// enough for the lab's narrowest column of checks); reports always say Name.
	Short  string `json:"-"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Decides is whether the check counts towards the verdict (a scenario may name the checks
	// its lesson is about; the others are still shown).
	Decides bool `json:"decides"`
}

// Check IDs, as a scenario's verdict-checks names them.
const (
	CheckProcessedOnce = "processed-once"
	CheckOneOwner      = "one-owner"
	CheckWrittenOnce   = "written-once"
	CheckNoViolations  = "no-violations"
	CheckNoDuplicates  = "no-duplicate-rows"
	CheckOneCreation   = "one-creation-per-key"
	CheckProviderTxIDs = "provider-tx-ids"
	CheckNoneLost      = "none-lost"
	CheckRecovered     = "recovered"
	CheckNoLockWaits   = "no-lock-waits"
	CheckOutage        = "outage-waited-out"
)

// CheckIDs lists every check ID.
func CheckIDs() []string {
	return []string{CheckOneOwner, CheckProcessedOnce, CheckWrittenOnce, CheckNoViolations, CheckNoDuplicates,
		CheckOneCreation, CheckProviderTxIDs, CheckNoneLost, CheckRecovered, CheckNoLockWaits, CheckNoUndoneFinish, CheckNoEarlyReclaim, CheckOutage}
}

// ExpectResult is one expectation and what the run gave.
type ExpectResult struct {
	Expect string `json:"expect"`
	When   string `json:"when,omitempty"`
	Line   int    `json:"line"`
	Actual string `json:"actual"`
	OK     bool   `json:"ok"`
	// NotJudged: the run left its script, and the expectation describes the script's own run
	// (Summary.ExpectationsNotJudged); OK is false, and says nothing.
	NotJudged bool `json:"not_judged,omitempty"`
}

// Recovery is the lease-expiry proof for one message whose owner crashed while holding it.
type Recovery struct {
	Key                  string `json:"key"`
	CrashedOwner         string `json:"crashed_owner"`
	CrashedAt            string `json:"crashed_at"`
	LeaseUntil           string `json:"lease_until"`
	BlockedBeforeExpiry  bool   `json:"blocked_before_expiry"`
	ReclaimedBy          string `json:"reclaimed_by"`
	ReclaimedAt          string `json:"reclaimed_at"`
	ReclaimedAfterExpiry bool   `json:"reclaimed_after_expiry"`
	ProcessedTimes       int    `json:"processed_times"`
	OK                   bool   `json:"ok"`
}

// runView is what the summary, the checks and the expectations are read from, once a run has
// happened: the scenario, the database, the ledger, the provider and the gateway's counts, the
// run's shared state, its workers and the settings it started with, the rescuer, and why the
// run did not finish or left its script. They only read it (Session.view makes one).
type runView struct {
	sc        *Scenario
	db        DB
	ledger    *Ledger
	provider  *Provider
	gateway   *Gateway
	env       *env
	workers   []*Worker
	initial   Settings
	rescuer   *Rescuer
	stalled   string
	offScript []string
}

// view is the session as the summary reads it now.
func (s *Session) view() *runView {
	return &runView{sc: s.Scenario, db: s.db, ledger: s.ledger, provider: s.provider, gateway: s.gateway, env: s.env,
		workers: s.crew.workers, initial: s.InitialSettings(), rescuer: s.rescuer, stalled: s.script.watch.stalled,
		offScript: s.off}
}

// Summarize counts the run: ledgers from memory, row states from the database.
func (s *Session) Summarize(ctx context.Context) (*Summary, error) { return s.view().summarize(ctx) }

// summarize counts the run: ledgers from memory, row states from the database.
func (v *runView) summarize(ctx context.Context) (*Summary, error) {
	c, err := v.db.Counts(ctx)
	if err != nil {
		return nil, err
	}
	total := v.ledger.Total()
	calls, _, again := v.provider.CallCounts()
	sum := &Summary{
		Scenario: v.sc.Name, Title: v.sc.Title, Database: v.db.Path(),
		Settings:           settingsMap(v.initial),
		Messages:           c.Messages,
		ProcessingAttempts: total.ProcessingAttempts,
		StatusChecks:       calls, StatusChecksByKey: v.provider.calledAgain(), KeysCheckedMoreThanOnce: again,
		RowsLoaded: total.RowsLoaded,
		ClaimsWon:  total.ClaimsWon, ClaimsEmpty: total.ClaimsEmpty, ClaimsBlocked: total.ClaimsBlocked, ClaimsBackoff: total.ClaimsBackoff,
		LockWaits: total.LockWaits, LockWaitedMS: total.LockWaited.Milliseconds(), Backend: v.sc.Backend,
		Reclaims:            total.Reclaims,
		OwnershipViolations: total.OwnershipViolations, RejectedFinalizes: total.RejectedFinalizes,
		BusyRetries:       total.BusyRetries,
		ProcessedByWorker: map[string]int{}, LoadedByWorker: map[string]int{},
		Payments:      PaymentCounts{Paid: c.PaymentsPaid, Failed: c.PaymentsFailed, Pending: c.PaymentsPending},
		Outbox:        OutboxCounts{Processed: c.OutboxProcessed, Pending: c.OutboxPending, Processing: c.OutboxProcessing},
		DuplicateRows: c.DuplicateRows,
		Lost:          c.Messages - c.OutboxProcessed - c.OutboxDeadLettered,
		DeadLettered:  c.OutboxDeadLettered,
		Questions:     v.sc.Questions(),
	}
	for _, b := range v.sc.Expect {
		for _, e := range b.Items {
			if key, ok := strings.CutPrefix(e.Metric, "status_checks["); ok && strings.HasSuffix(key, "]") {
				key = strings.TrimSuffix(key, "]")
				if n := v.provider.CallsFor(key); n > 0 {
					sum.StatusChecksByKey[key] = n
					if !slices.Contains(sum.named, key) {
						sum.named = append(sum.named, key)
					}
				}
			}
		}
	}
	v.summarizeRetries(sum)
	sum.Recovery, sum.CrashedOwners, sum.Recovered, sum.ProcessedAgainAfterReclaim = v.ledger.recoveries(MaxExamples)
	sum.UniqueProcessed, sum.ProcessedMoreThanOnce, sum.FinalizedMoreThanOnce = v.ledger.messageCounts()
	rep := v.ledger.repeats()
	sum.ReprocessedAfterLostLease, sum.ProcessedByTwoOwners, sum.ReprocessedKeys = rep.AfterLostLease, rep.TwoOwners, rep.AgainKeys
	sum.ReprocessedBySameWorker = rep.SameWorker
	slices.Sort(sum.named)
	for _, w := range v.workers {
		l := v.ledger.Worker(w.Name)
		sum.ProcessedByWorker[w.Name] = l.ProcessingAttempts
		sum.LoadedByWorker[w.Name] = l.RowsLoaded
	}
	var maxPerKey int
	sum.CreationCalls, sum.CreationCallsInWorker, maxPerKey = v.gateway.CreationCalls()
	badIDs := 0
	err = v.db.EachTransactionID(ctx, func(_, id string) error {
		if id != "" && !v.provider.Issued(id) {
			badIDs++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("summarize: %w", err)
	}
	sum.Rescuer, sum.Clocks = v.rescuer.summary(), v.clockSummary()
	v.headlessSettings(sum.Settings)
	sum.Checks = append(v.checks(sum, c, maxPerKey, badIDs), v.extraChecks(sum)...)
	sum.Passed = true
	for _, ch := range sum.Checks {
		sum.Passed = sum.Passed && (ch.OK || !ch.Decides)
	}
	sum.Verdict = v.sc.Failure
	if sum.Passed {
		sum.Verdict = v.sc.Pass
	}
	sum.WatchdogEnded, sum.DidNotFinish = v.stalled != "", v.stalled
	sum.Expectations, sum.ExpectationsMet = v.expectations(sum)
	return sum, nil
}

func settingsMap(st Settings) map[string]string {
	m := map[string]string{}
	for _, t := range ToggleNames() {
		v, _ := st.Get(t)
		m[t] = OnOff(v)
	}
	m["lease"] = st.Lease.String()
	m["heartbeat-every"] = st.HeartbeatEvery.String()
	m["provider-latency"] = st.ProviderLatency.String()
	return m
}

func (v *runView) checks(sum *Summary, c Counts, maxPerKey, badIDs int) []Check {
	oneOwner := fmt.Sprintf("%d by two owners at once", sum.ProcessedByTwoOwners)
	if sum.ReprocessedAfterLostLease > 0 {
		oneOwner += fmt.Sprintf("; %d again after its owner lost the lease (at-least-once)", sum.ReprocessedAfterLostLease)
	}
	if sum.ReprocessedBySameWorker > 0 {
		oneOwner += fmt.Sprintf("; %d processed again by the same worker, one lease at a time", sum.ReprocessedBySameWorker)
	}
	checks := []Check{
		{ID: CheckOneOwner, Name: "each message had one owner at a time", OK: sum.ProcessedByTwoOwners == 0, Detail: oneOwner},
	}
	if slices.Contains(v.sc.VerdictChecks, CheckProcessedOnce) || sum.ReprocessedAfterLostLease+sum.ReprocessedBySameWorker > 0 {
		// The strict check: shown when a lesson decides on it, or, set aside, to explain an
		// at-least-once re-processing.
		checks = append(checks, Check{ID: CheckProcessedOnce, Name: "each message processed exactly once",
			OK:     sum.UniqueProcessed == sum.Messages && sum.ProcessedMoreThanOnce == 0,
			Detail: processedOnceDetail(sum)})
	}
	checks = append(checks, []Check{
		{ID: CheckWrittenOnce, Name: "each outcome written exactly once", OK: sum.FinalizedMoreThanOnce == 0,
			Detail: fmt.Sprintf("%d %s finalized more than once", sum.FinalizedMoreThanOnce, plural(sum.FinalizedMoreThanOnce, "message"))},
		{ID: CheckNoViolations, Name: "zero ownership violations", OK: sum.OwnershipViolations == 0,
			Detail: fmt.Sprintf("%d", sum.OwnershipViolations)},
		{ID: CheckNoDuplicates, Name: "no duplicate payment/outbox rows", OK: c.DuplicateRows == 0,
			Detail: fmt.Sprintf("max %d payment and %d outbox row per key", c.MaxPaymentsPerKey, c.MaxOutboxPerKey)},
		{ID: CheckOneCreation, Name: "one gateway creation attempt per key",
			OK:     sum.CreationCalls == sum.Messages && maxPerKey <= 1 && sum.CreationCallsInWorker == 0,
			Detail: fmt.Sprintf("%d / %d, %d in workers", sum.CreationCalls, sum.Messages, sum.CreationCallsInWorker)},
		{ID: CheckProviderTxIDs, Name: "tx ids only from provider, Paid only",
			OK:     c.PaidWithTxID == c.PaymentsPaid && c.FailedWithTxID == 0 && badIDs == 0,
			Detail: fmt.Sprintf("%d Paid w/ id, %d Failed w/ id, %d not from the provider", c.PaidWithTxID, c.FailedWithTxID, badIDs)},
		noneLost(c),
	}...)
	if slices.Contains(v.sc.VerdictChecks, CheckNoLockWaits) || sum.LockWaits > 0 {
		checks = append(checks, Check{ID: CheckNoLockWaits, Name: "no claim waited for another's row lock",
			OK:     sum.LockWaits == 0,
			Detail: fmt.Sprintf("%d %s waited, %d ms in all", sum.LockWaits, plural(sum.LockWaits, "claim"), sum.LockWaitedMS)})
	}
	if sum.CrashedOwners > 0 {
		parts := []string{}
		for _, r := range sum.Recovery {
			parts = append(parts, r.Words())
		}
		detail := strings.Join(parts, "; ")
		if more := sum.CrashedOwners - len(sum.Recovery); more > 0 {
			detail += fmt.Sprintf("; and %d more (%d of all %d reclaimed after expiry and processed)", more, sum.Recovered, sum.CrashedOwners)
		}
		checks = append(checks, Check{ID: CheckRecovered, Name: "crashed owner's lease reclaimed after expiry",
			OK: sum.Recovered == sum.CrashedOwners, Detail: detail})
	}
	for i := range checks {
		checks[i].Decides = v.sc.decides(checks[i].ID)
	}
	return checks
}

// processedOnceDetail counts the messages processed, and says why some were processed again.
func processedOnceDetail(sum *Summary) string {
	d := fmt.Sprintf("%d unique of %d, %d processed more than once", sum.UniqueProcessed, sum.Messages, sum.ProcessedMoreThanOnce)
	if sum.ReprocessedAfterLostLease > 0 {
		d += fmt.Sprintf(" (%d after a lost lease: at-least-once, which no lease prevents; the idempotency key covers it)",
			sum.ReprocessedAfterLostLease)
	}
	if sum.ReprocessedBySameWorker > 0 {
		d += fmt.Sprintf(" (%d again by the same worker, under a new lease)", sum.ReprocessedBySameWorker)
	}
	return d
}

// Recoveries is the lease-expiry proof of every crash of a worker that held a lease, in crash
// order: was another worker blocked before expiry, did one reclaim it after, and how often was
// the message processed after the reclaim. The ledger follows each crash as the events arrive
// (recovery.go), so the proof does not depend on how much of the event log is kept. The
// summary lists the first MaxExamples and counts them all.
func (l *Ledger) Recoveries() []Recovery {
	all, _, _, _ := l.recoveries(-1)
	return all
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
