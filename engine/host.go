package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// HostConn is a connection with the batch methods a hosted worker needs: a claim of up to k
// messages in one statement or transaction, and the finalize of several in one transaction,
// each guarded and rolled back alone when its guard fails (a savepoint each, or one statement
// that checks each row). Both stores' connections are HostConns.
type HostConn interface {
	Conn
	ClaimBatch(ctx context.Context, req ClaimRequest, k int) ([]Message, error)
	FinalizeBatch(ctx context.Context, reqs []FinalizeRequest) ([]FinalizeResult, error)
}

// HostOptions shape a hosted worker: one process, one owner, Slots messages in progress at once.
type HostOptions struct {
	// Name is the worker's display name in its events; ID the LockedBy it writes ("" : Name).
	Name, ID string
	// Slots is how many messages it works on at once: Slots goroutines process, and the fetcher
	// claims, in one statement, for every free place in their queue (Slots long), so that the
	// next messages are claimed while these are processed.
	Slots int
	// Lease is the lease each claim and heartbeat writes.
	Lease time.Duration
	// HeartbeatEvery is how often a held lease is renewed; 0 (or a whole lease or more):
	// DefaultHeartbeat(Lease).
	HeartbeatEvery time.Duration
	// Poll is the wait after a fetch that claimed nothing; 0: 5 ms.
	Poll time.Duration
	// BatchMax is the most finalizes the completer writes in one transaction; 0: twice Slots,
	// at most hostBatchCap (and never fewer than Slots). The completer's queue holds
	// max(Slots, BatchMax).
	BatchMax int
	// Completers is how many completers finalize at once, each in its own transaction on a
	// connection of its own, one gathering the next batch while the others write theirs; 0: 1.
	// Only a database that locks rows (PostgreSQL) gains from more: SQLite's one write lock
	// makes a second wait for the first. Measured on PostgreSQL with fsync on (2 cores), a
	// second completer halved the batches and cost a quarter of the rate at 16 slots, and
	// gained 4-9 % at 100: hence one.
	Completers int
	// Linger is how long the completer waits for a batch to fill up to BatchMax once its first
	// message is ready; 0: it writes at once what is ready.
	Linger time.Duration
	// UntilEmpty ends the run once nothing is held and the database has no unfinished message.
	UntilEmpty bool
	// Finish is how long, once ctx ends, the messages already being processed get to finish
	// (their provider call and their finalize); the ones claimed but not started are released
	// at once. 0: Lease.
	Finish time.Duration
	// Process is the work of one message: the provider call. It must honour ctx.
	Process func(ctx context.Context, m Message) (ProviderResult, error)
	// Wall is the real time: the requests' clock (read inside each transaction), the polls and
	// the heartbeats. nil: SystemWall.
	Wall Wall
	// OnEvent, when set, is called with each message's events (claim, finalize, heartbeat,
	// release), from the goroutine that made it.
	OnEvent func(Event)
	// OnFetch and OnBatch, when set, are told of each fetch that claimed something (how many
	// slots were free, what it took) and of each completer transaction (what it finalized).
	// OnBatch is called by one completer at a time.
	OnFetch func(free int, got []Message)
	OnBatch func(reqs []FinalizeRequest, res []FinalizeResult)
}

// HostStats count what a hosted worker did (with the names stress --json gives them).
type HostStats struct {
	Fetches      int `json:"fetches"`       // claim statements that took at least one message
	EmptyFetches int `json:"empty_fetches"` // claim statements that took none
	Claimed      int `json:"claimed"`       // messages claimed
	Batches      int `json:"batches"`       // completer transactions
	MaxBatch     int `json:"max_batch"`     // the largest of them
	Finalized    int `json:"finalized"`     // finalizes committed
	Rejected     int `json:"rejected"`      // finalizes rejected by their guard (rolled back alone)
	Renewed      int `json:"renewed"`       // heartbeats that extended a lease
	LostLeases   int `json:"lost_leases"`   // heartbeats that found the lease gone (the message was given up)
	Released     int `json:"released"`      // messages given back, guarded, before being processed (shutdown, failed call)
	BusyRetries  int `json:"busy_retries"`  // transactions the database gave up on and that were retried
	// Waits is where the run's time went (not in stress --json: they are timings, not counts).
	Waits HostWaits `json:"-"`
}

// HostWaits is where a hosted worker's goroutines spent their time: what the benchmark and the
// worker's end line show to tell waiting from working.
type HostWaits struct {
	Asked     int           // slots the fetches asked for (the free places at each fetch)
	FetchIdle time.Duration // the fetcher waiting for a free place
	FetchPoll time.Duration // the fetcher waiting after a fetch that took nothing
	FetchSQL  time.Duration // the fetcher in its claim statements
	SlotIdle  time.Duration // the slots waiting for a message (summed over the slots)
	SlotHand  time.Duration // the slots waiting for room in the completer's queue (summed)
	DoneIdle  time.Duration // the completers waiting for a finished message (summed)
	DoneSQL   time.Duration // the completers in their finalize transactions, to their commit (summed)
}

// Add adds o's timings to w.
func (w *HostWaits) Add(o HostWaits) {
	w.Asked += o.Asked
	w.FetchIdle += o.FetchIdle
	w.FetchPoll += o.FetchPoll
	w.FetchSQL += o.FetchSQL
	w.SlotIdle += o.SlotIdle
	w.SlotHand += o.SlotHand
	w.DoneIdle += o.DoneIdle
	w.DoneSQL += o.DoneSQL
}

// Add adds o's counts to s: the stats of several hosted workers as one (MaxBatch the largest).
func (s *HostStats) Add(o HostStats) {
	s.Fetches += o.Fetches
	s.EmptyFetches += o.EmptyFetches
	s.Claimed += o.Claimed
	s.Batches += o.Batches
	s.MaxBatch = max(s.MaxBatch, o.MaxBatch)
	s.Finalized += o.Finalized
	s.Rejected += o.Rejected
	s.Renewed += o.Renewed
	s.LostLeases += o.LostLeases
	s.Released += o.Released
	s.BusyRetries += o.BusyRetries
	s.Waits.Add(o.Waits)
}

// hostItem is a message on its way from a slot to the completer: with its provider answer, or
// to be released (release true, why says why).
type hostItem struct {
	m       Message
	res     ProviderResult
	release bool
	why     string
}

// heldLease is a lease the host holds, as the heartbeat keeps it.
type heldLease struct {
	m         Message
	lost      bool // a heartbeat found it gone
	finishing bool // handed to the completer: no more heartbeats
}

// host is one run of a hosted worker.
type host struct {
	opt      HostOptions
	db       DB
	fetchC   HostConn   // the fetcher's connection
	doneC    []HostConn // the completers'
	beatC    Conn       // the heartbeat's
	free     chan struct{}
	queued   atomic.Int64 // messages handed to the slots whose place is not yet given back
	work     chan Message
	done     chan hostItem
	stopping chan struct{} // closed when ctx ends: no more fetches, unstarted messages are released
	// checkedEmpty is when the fetcher last counted the unfinished messages (UntilEmpty).
	checkedEmpty time.Time

	batchMu sync.Mutex // OnBatch's
	gather  sync.Mutex // held by the completer gathering a batch
	mu      sync.Mutex
	held    map[int64]*heldLease
	stats   HostStats
	err     error
}

// RunHost runs a hosted worker on db until ctx ends or, with UntilEmpty, no work is left: one
// fetcher that claims, in one statement, a message for every free place in the slots' queue; Slots goroutines that
// process them; completers (Completers) that finalize what they finished in batches (each finalize
// guarded by owner and lease version, a rejected one rolled back alone, the payment in the same
// transaction as its message); and a heartbeat that renews the leases held. When ctx ends it
// stops fetching, releases (guarded) what it claimed and had not started, lets what it was
// processing finish within Finish, and returns: after a clean stop it holds no lease.
func RunHost(ctx context.Context, db DB, opt HostOptions) (HostStats, error) {
	if opt.Slots < 1 {
		return HostStats{}, fmt.Errorf("hosted worker: %d slots, want at least 1", opt.Slots)
	}
	if err := CheckLease(opt.Lease); err != nil {
		return HostStats{}, fmt.Errorf("hosted worker: %w", err)
	}
	if opt.Process == nil {
		return HostStats{}, errors.New("hosted worker: no Process")
	}
	if opt.ID == "" {
		opt.ID = opt.Name
	}
	if opt.HeartbeatEvery <= 0 || opt.HeartbeatEvery >= opt.Lease {
		opt.HeartbeatEvery = DefaultHeartbeat(opt.Lease)
	}
	if opt.Poll <= 0 {
		opt.Poll = 5 * time.Millisecond
	}
	if opt.BatchMax <= 0 {
		opt.BatchMax = max(min(2*opt.Slots, hostBatchCap), opt.Slots)
	}
	if opt.Finish <= 0 {
		opt.Finish = opt.Lease
	}
	if opt.Wall == nil {
		opt.Wall = SystemWall{}
	}
	h := &host{opt: opt, db: db, free: make(chan struct{}, opt.Slots), work: make(chan Message, opt.Slots),
		done: make(chan hostItem, max(opt.Slots, opt.BatchMax)), stopping: make(chan struct{}), held: map[int64]*heldLease{}}
	for range opt.Slots {
		h.free <- struct{}{}
	}
	if err := h.connect(ctx); err != nil {
		return HostStats{}, err
	}
	defer h.close()

	// finishCtx is what the slots' provider calls run on: it outlives ctx by Finish. The
	// database calls run on dbCtx, never cancelled: a stop does not cut a transaction in half,
	// and what is released at the stop is released.
	dbCtx := context.WithoutCancel(ctx)
	finishCtx, cancelFinish := context.WithCancel(dbCtx)
	defer cancelFinish()
	runCtx, stopRun := context.WithCancel(ctx) // ended by ctx, by an error, or by UntilEmpty
	defer stopRun()
	go func() {
		<-runCtx.Done()
		close(h.stopping)
		select {
		case <-opt.Wall.After(opt.Finish):
			cancelFinish()
		case <-finishCtx.Done():
		}
	}()

	var slots, tail sync.WaitGroup
	for range opt.Slots {
		slots.Add(1)
		go func() { defer slots.Done(); h.slot(finishCtx) }()
	}
	tail.Add(1 + len(h.doneC))
	beatStop := make(chan struct{})
	for _, c := range h.doneC {
		go func() { defer tail.Done(); h.complete(dbCtx, c, stopRun) }()
	}
	go func() { defer tail.Done(); h.heartbeat(dbCtx, beatStop, stopRun) }()

	h.fetch(runCtx, stopRun)
	close(h.work)
	slots.Wait()
	close(h.done)
	close(beatStop)
	tail.Wait()

	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats, h.err
}

// connect opens the host's three connections.
func (h *host) connect(ctx context.Context) error {
	open := func(role string) (HostConn, error) {
		c, err := h.db.Connect(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: connect its %s: %w", h.opt.Name, role, err)
		}
		if !h.db.Capabilities().Batches {
			c.Close()
			return nil, fmt.Errorf("%s: this database's connections cannot claim or finalize in batches", h.opt.Name)
		}
		return c.(HostConn), nil
	}
	var err error
	if h.fetchC, err = open("fetcher"); err != nil {
		return err
	}
	h.beatC, err = open("heartbeat")
	if err != nil {
		return err
	}
	for range max(h.opt.Completers, 1) {
		c, err := open("completer")
		if err != nil {
			return err
		}
		h.doneC = append(h.doneC, c)
	}
	return nil
}

func (h *host) close() {
	for _, c := range append([]HostConn{h.fetchC}, h.doneC...) {
		if c != nil {
			c.Close()
		}
	}
	if h.beatC != nil {
		h.beatC.Close()
	}
}

// fail records the first error that ends the run, and ends it.
func (h *host) fail(err error, stop func()) {
	h.mu.Lock()
	if h.err == nil {
		h.err = err
	}
	h.mu.Unlock()
	stop()
}

func (h *host) count(fn func(*HostStats)) {
	h.mu.Lock()
	fn(&h.stats)
	h.mu.Unlock()
}

func (h *host) event(e Event) {
	if h.opt.OnEvent == nil {
		return
	}
	e.Worker, e.ID = h.opt.Name, h.opt.ID
	if e.Text == "" {
		e.Text = Sentence(e)
	}
	h.opt.OnEvent(e)
}

// wait pauses for d, or until ctx ends.
func (h *host) wait(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-h.opt.Wall.After(d):
	}
}

// fetch is the fetcher: it waits for a free place in the slots' queue, takes every other free one, claims that many
// messages in one statement and hands them to the slots, until ctx ends.
func (h *host) fetch(ctx context.Context, stop func()) {
	for {
		t0 := h.opt.Wall.Now()
		k, ok := h.places(ctx)
		if !ok {
			return
		}
		idle := h.opt.Wall.Now().Sub(t0)
		req := ClaimRequest{Worker: h.opt.ID, Clock: h.opt.Wall.Now, Lease: h.opt.Lease}
		t1 := h.opt.Wall.Now()
		got, err := h.fetchC.ClaimBatch(ctx, req, k)
		sql := h.opt.Wall.Now().Sub(t1)
		switch {
		case errors.Is(err, ErrBusy):
			h.count(func(s *HostStats) { s.BusyRetries++ })
		case err != nil && ctx.Err() != nil:
			got = nil // ended while claiming: nothing was taken
		case err != nil:
			h.fail(fmt.Errorf("%s: fetch: %w", h.opt.Name, err), stop)
		}
		held := h.took(got, k, idle, sql, err)
		if len(got) > 0 {
			h.settle(len(got))
			continue
		}
		if h.opt.UntilEmpty && held == 0 && err == nil && h.empty(ctx) {
			stop()
			return
		}
		t2 := h.opt.Wall.Now()
		h.wait(ctx, h.opt.Poll)
		h.count(func(s *HostStats) { s.Waits.FetchPoll += h.opt.Wall.Now().Sub(t2) })
	}
}

// places waits for a free place, then takes the others that are free; while fewer than half
// are, it waits for more. It returns how many it took, or false when ctx ended (it then gives
// back what it took).
func (h *host) places(ctx context.Context) (int, bool) {
	select {
	case <-ctx.Done():
		return 0, false
	case <-h.free:
	}
	k := 1
	for k < h.opt.Slots {
		select {
		case <-h.free:
			k++
			continue
		default:
		}
		if k >= (h.opt.Slots+1)/2 {
			return k, true
		}
		// Fewer than half the places are free: more than half a queue of messages waits
		// for the slots, so none of them starves while the fetcher waits for places to
		// claim for, rather than claiming a few (a commit each).
		select {
		case <-ctx.Done():
			for range k {
				h.free <- struct{}{}
			}
			return 0, false
		case <-h.free:
			k++
		}
	}
	return k, true
}

// took records a claim for k places that took got (err its error, idle the wait for the
// places, sql the claim's own time): the leases now held and the counts, the places it did not
// fill given back, and each message handed to a slot with its claim event. It returns how many
// leases the host holds.
func (h *host) took(got []Message, k int, idle, sql time.Duration, err error) int {
	h.mu.Lock()
	for _, m := range got {
		h.held[m.ID] = &heldLease{m: m}
	}
	held := len(h.held)
	h.stats.Waits.FetchIdle += idle
	h.stats.Waits.FetchSQL += sql
	h.stats.Waits.Asked += k
	if len(got) > 0 {
		h.stats.Fetches++
		h.stats.Claimed += len(got)
	} else if err == nil {
		h.stats.EmptyFetches++
	}
	h.mu.Unlock()
	for range k - len(got) {
		h.free <- struct{}{}
	}
	if len(got) > 0 && h.opt.OnFetch != nil {
		h.opt.OnFetch(k, got)
	}
	for _, m := range got {
		h.event(Event{Kind: EvClaim, At: m.LockedUntil.Add(-h.opt.Lease), Key: m.IdempotencyKey, Outcome: OutcomeWon,
			Rows: 1, Until: m.LockedUntil, Version: m.LeaseVersion})
		h.queued.Add(1)
		h.work <- m // never blocks: a message per place taken
	}
	return held
}

// settle lets the slots that are waiting take the n messages just handed out before the
// fetcher counts the free places again. Without it the fetcher, running on while the slots it
// woke are still being scheduled, found only the places not taken by its last claim free, and
// the claims split the slots between them (about half of them each, measured at 16 and 100
// slots): twice the claims, each a commit, for the same messages. It yields at most 4n times,
// and only until every message handed out has been taken and its place given back: a slot
// that is busy does not hold it up for longer.
func (h *host) settle(n int) {
	for i := 0; i < 4*n && h.queued.Load() > 0; i++ {
		runtime.Gosched()
	}
}

// emptyCheckEvery is how often, at most, an idle fetcher with UntilEmpty counts the database's
// unfinished messages: a count reads every row, and an idle host polls every Poll while other
// hosts finish the last messages.
const emptyCheckEvery = 100 * time.Millisecond

// empty reports whether the database has no unfinished message left (nor any it cannot tell).
// It counts at most every emptyCheckEvery, and says false in between.
func (h *host) empty(ctx context.Context) bool {
	now := h.opt.Wall.Now()
	if !h.checkedEmpty.IsZero() && now.Sub(h.checkedEmpty) < emptyCheckEvery {
		return false
	}
	h.checkedEmpty = now
	c, err := h.db.Counts(ctx)
	return err == nil && c.OutboxPending == 0 && c.OutboxProcessing == 0
}

// slot is one of the goroutines that process: it calls the provider for each message it is
// handed and passes the answer to the completer. A message handed to it after the stop, or
// whose lease the heartbeat found gone, is not processed.
func (h *host) slot(ctx context.Context) {
	var idle, handing time.Duration
	defer func() { h.count(func(s *HostStats) { s.Waits.SlotIdle += idle; s.Waits.SlotHand += handing }) }()
	for {
		t0 := h.opt.Wall.Now()
		m, ok := <-h.work
		if !ok {
			return
		}
		idle += h.opt.Wall.Now().Sub(t0)
		h.free <- struct{}{} // room in the queue: the fetcher may claim the next now
		h.queued.Add(-1)
		select {
		case <-h.stopping:
			handing += h.hand(hostItem{m: m, release: true, why: "stopped before processing it"})
			continue
		default:
		}
		if h.lost(m.ID) {
			handing += h.hand(hostItem{m: m, release: true})
			continue
		}
		res, err := h.opt.Process(ctx, m)
		switch {
		case err != nil && ctx.Err() != nil:
			handing += h.hand(hostItem{m: m, release: true, why: "stopped before its call answered"})
		case err != nil:
			handing += h.hand(hostItem{m: m, release: true, why: "the call failed: " + err.Error()})
		default:
			handing += h.hand(hostItem{m: m, res: res})
		}
	}
}

// hand gives a processed message to the completer, and returns how long it waited for room in
// the completer's queue. The slot was freed for the fetcher when it took the message (its
// place in the queue of claimed messages, that is): the fetcher claims the next while this
// one is processed and finalized, as River's slots are freed before its completer has written
// their jobs. The queue of claimed messages holds at most Slots, and the completer's at most
// max(Slots, BatchMax) (a slot waits for room), so the host holds at most 2 × Slots + that
// queue and the batch being written. Each lease is renewed until the completer
// takes its message.
func (h *host) hand(it hostItem) time.Duration {
	t0 := h.opt.Wall.Now()
	h.done <- it
	return h.opt.Wall.Now().Sub(t0)
}

func (h *host) lost(id int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.held[id]
	return l == nil || l.lost
}

// complete is the completer: it takes what the slots finished, as many as are ready up to
// BatchMax, and finalizes them in one transaction; what is to be released it releases, guarded.
func (h *host) complete(ctx context.Context, c HostConn, stop func()) {
	batch := make([]hostItem, 0, h.opt.BatchMax)
	var idle time.Duration
	defer func() { h.count(func(s *HostStats) { s.Waits.DoneIdle += idle }) }()
	for {
		// One completer gathers a batch at a time, so that a batch is what was ready (or came
		// within Linger) rather than a share of it; the others write theirs meanwhile.
		t0 := h.opt.Wall.Now()
		h.gather.Lock()
		it, ok := <-h.done
		if !ok {
			h.gather.Unlock()
			return
		}
		idle += h.opt.Wall.Now().Sub(t0)
		batch = h.fill(append(batch[:0], it))
		h.gather.Unlock()
		h.mu.Lock()
		for _, it := range batch {
			if l := h.held[it.m.ID]; l != nil {
				l.finishing = true
			}
		}
		h.mu.Unlock()
		h.completeBatch(ctx, c, batch, stop)
	}
}

// fill adds to batch what is ready, up to BatchMax, waiting up to Linger for it.
func (h *host) fill(batch []hostItem) []hostItem {
	var linger <-chan time.Time // nil: do not wait
	if h.opt.Linger > 0 {
		linger = h.opt.Wall.After(h.opt.Linger)
	}
	for len(batch) < h.opt.BatchMax {
		if linger == nil {
			select {
			case it, ok := <-h.done:
				if !ok {
					return batch
				}
				batch = append(batch, it)
				continue
			default:
				return batch
			}
		}
		select {
		case it, ok := <-h.done:
			if !ok {
				return batch
			}
			batch = append(batch, it)
		case <-linger:
			linger = nil
		}
	}
	return batch
}

// completeBatch finalizes and releases one batch, then frees its slots.
func (h *host) completeBatch(ctx context.Context, c HostConn, batch []hostItem, stop func()) {
	var (
		reqs []FinalizeRequest
		rels []hostItem
	)
	// One ProcessedAtUtc for the batch, read as the completer takes it rather than inside the
	// transaction (a clock there would take PostgreSQL's one-statement batch finalize away:
	// its time is sent before the locks are held). It is a record of when, not a lease: no
	// guard reads it, and the guards (owner, lease version) are judged inside the transaction.
	now := h.opt.Wall.Now().UTC().Truncate(time.Millisecond)
	for _, it := range batch {
		if it.release {
			rels = append(rels, it)
			continue
		}
		reqs = append(reqs, FinalizeRequest{Worker: h.opt.ID, Message: it.m, Now: now,
			PaymentStatus: it.res.Status, TransactionID: it.res.TransactionID, OwnershipCheck: true, Fencing: true})
	}
	if len(reqs) > 0 {
		h.finalize(ctx, c, reqs, stop)
	}
	for _, it := range rels {
		h.release(ctx, c, it, stop)
	}
	h.mu.Lock()
	for _, it := range batch {
		// Only this claim's lease: once a release has committed, the fetcher may have claimed
		// the message again (a new lease version) before this line, and that claim's lease is
		// still held.
		if l := h.held[it.m.ID]; l != nil && l.m.LeaseVersion == it.m.LeaseVersion {
			delete(h.held, it.m.ID)
		}
	}
	h.mu.Unlock()
}

// busyFor is how long the completer retries a transaction the database keeps refusing as busy
// before the hosted worker gives up with an error: a whole lease (at least a second), by
// which time every lease the transaction guards has ended and its guards could only fail.
func (h *host) busyFor() time.Duration { return max(h.opt.Lease, time.Second) }

// retryBusy runs tx, and again after a poll while the database answers that it is busy (nothing
// was written then), for up to busyFor; the error is the last one, wrapped when it is still busy.
// The completer's context is never cancelled (a stop does not cut a transaction in half), so
// the deadline, not the context, ends the retries.
func (h *host) retryBusy(ctx context.Context, tx func() error) error {
	give := h.opt.Wall.Now().Add(h.busyFor())
	for {
		err := tx()
		if !errors.Is(err, ErrBusy) {
			return err
		}
		if !h.opt.Wall.Now().Before(give) {
			return fmt.Errorf("still busy after %s of retries: %w", h.busyFor(), err)
		}
		h.count(func(s *HostStats) { s.BusyRetries++ })
		h.wait(ctx, h.opt.Poll)
	}
}

// finalize writes one batch of finalizes in one transaction, retrying it while the database is
// busy.
func (h *host) finalize(ctx context.Context, c HostConn, reqs []FinalizeRequest, stop func()) {
	var res []FinalizeResult
	t0 := h.opt.Wall.Now()
	err := h.retryBusy(ctx, func() (err error) {
		res, err = c.FinalizeBatch(ctx, reqs)
		return err
	})
	took := h.opt.Wall.Now().Sub(t0)
	if err != nil {
		h.fail(fmt.Errorf("%s: finalize batch: %w", h.opt.Name, err), stop)
		return
	}
	h.count(func(s *HostStats) {
		s.Waits.DoneSQL += took
		s.Batches++
		s.MaxBatch = max(s.MaxBatch, len(reqs))
		for _, r := range res {
			if r.Committed {
				s.Finalized++
			} else {
				s.Rejected++
			}
		}
	})
	if h.opt.OnBatch != nil {
		h.batchMu.Lock() // the completers tell of their batches one at a time
		h.opt.OnBatch(reqs, res)
		h.batchMu.Unlock()
	}
	for i, r := range res {
		ev := Event{Kind: EvFinalize, At: r.At, Key: reqs[i].Message.IdempotencyKey, Rows: r.RowsAffected,
			Version: reqs[i].Message.LeaseVersion, OwnerCheck: true, Fenced: true, Payment: reqs[i].PaymentStatus,
			PriorStatus: r.PriorStatus, PriorOwner: r.PriorOwner, PriorVersion: r.PriorVersion, Outcome: OutcomeCommitted}
		if !r.Committed {
			ev.Outcome = OutcomeRejected
		}
		h.event(ev)
	}
}

// release gives a message back unprocessed, guarded by owner and lease version: Pending, and
// claimable again at once, retried while the database is busy as a finalize is. A message
// whose lease the heartbeat found gone is only forgotten.
func (h *host) release(ctx context.Context, c HostConn, it hostItem, stop func()) {
	if it.why == "" {
		return // its lease was lost: another owner has it
	}
	var res FailResult
	err := h.retryBusy(ctx, func() (err error) {
		res, err = c.Fail(ctx, FailRequest{Worker: h.opt.ID, Message: it.m, Now: h.opt.Wall.Now().UTC().Truncate(time.Millisecond), Error: it.why})
		return err
	})
	if err != nil {
		h.fail(fmt.Errorf("%s: release %s: %w", h.opt.Name, it.m.IdempotencyKey, err), stop)
		return
	}
	ev := Event{Kind: EvFail, At: res.At, Key: it.m.IdempotencyKey, Version: it.m.LeaseVersion, Error: it.why, Rows: 1, Outcome: OutcomeReleased}
	if !res.Released {
		ev.Rows, ev.Outcome = 0, OutcomeRejected
	} else {
		h.count(func(s *HostStats) { s.Released++ })
		ev.Text = fmt.Sprintf("%s released %s unprocessed (%s): Pending, claimable again at once", h.opt.Name, it.m.IdempotencyKey, it.why)
	}
	h.event(ev)
}

// heartbeat renews, every HeartbeatEvery, each lease held that was written (or renewed) at
// least HeartbeatEvery ago, until stop is closed.
func (h *host) heartbeat(ctx context.Context, stop <-chan struct{}, end func()) {
	for {
		select {
		case <-stop:
			return
		case <-h.opt.Wall.After(h.opt.HeartbeatEvery / 2):
		}
		due := h.opt.Wall.Now().Add(h.opt.Lease - h.opt.HeartbeatEvery)
		h.mu.Lock()
		var renew []Message
		for _, l := range h.held {
			if !l.lost && !l.finishing && !l.m.LockedUntil.After(due) {
				renew = append(renew, l.m)
			}
		}
		h.mu.Unlock()
		for _, m := range renew {
			res, err := h.beatC.Renew(ctx, RenewRequest{Worker: h.opt.ID, Message: m,
				LeaseTimes: LeaseTimes{Clock: h.opt.Wall.Now, Lease: h.opt.Lease}})
			if errors.Is(err, ErrBusy) {
				h.count(func(s *HostStats) { s.BusyRetries++ })
				continue
			}
			if err != nil {
				h.fail(fmt.Errorf("%s: heartbeat on %s: %w", h.opt.Name, m.IdempotencyKey, err), end)
				return
			}
			h.mu.Lock()
			l := h.held[m.ID]
			if l == nil || l.finishing || l.m.LeaseVersion != m.LeaseVersion { // finalized or released meanwhile (and perhaps claimed again): nothing to say
				h.mu.Unlock()
				continue
			}
			if res.Renewed {
				l.m.LockedUntil = res.Until
				h.stats.Renewed++
			} else {
				l.lost = true
				h.stats.LostLeases++
			}
			h.mu.Unlock()
			ev := Event{Kind: EvRenew, At: res.At, Key: m.IdempotencyKey, Outcome: OutcomeRenewed, Rows: 1, Until: res.Until}
			if !res.Renewed {
				ev.Outcome, ev.Rows = OutcomeLost, 0
			}
			h.event(ev)
		}
	}
}

// hostBatchCap caps BatchMax's default: a completer that may take up to twice the slots keeps
// up with a fetcher that claims for every free place (at 16 slots, fsync on: batches of 27-29
// instead of 16, 11-13 % more messages a second), but PostgreSQL's one-statement finalize
// costs more a message past about a hundred (measured: 0.058 ms a message at 99, 0.089 at
// 196, 0.15 at 385; 100 slots ran at 0.69x with batches of 196).
const hostBatchCap = 100
