// Package explore searches every schedule of a scenario's workers, up to a bound, on a real
// database: from the scenario's start, each state's next moves (a worker's next action, a crash,
// a pause, the clock moving past a lease, the rescuer's read and write) are carried out as the
// engine carries them out, each a real transaction, and every safety check is taken after every
// move. The search is breadth-first, so the first violation it finds is a shortest schedule
// that breaks a check; a state it has seen (the rows as the database holds them and the
// session's memory, engine.Probe.WriteStateAs) is not explored twice.
//
// A state is restored before each of its moves is tried: the database from a copy of it, and
// the session's memory by driving a new session through the state's schedule with every
// database call answered from the recording made when the schedule first ran (tape.go). How the
// database is copied is Config.Restore; docs/benchmarks.md has what each way costs.
//
// The package speaks no SQL and draws nothing: the database is an engine.DB whose store can copy
// itself (MemoryImages or FileImages), and the command line (ui/cli) prints the Result.
package explore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"leaselab/engine"
)

// Bounds limit the search.
type Bounds struct {
	Depth      int // moves in a schedule
	Crashes    int // crashes in a schedule
	ClockMoves int // clock moves in a schedule
	Pauses     int // pauses in a schedule (none by default: not stepping a worker is a pause)
	// MaxStates bounds the seen set: past it, a new state is checked but not explored further,
	// and the Result says the bound cut the search.
	MaxStates int
	// TimeLimit ends the search after that much time (0: none).
	TimeLimit time.Duration
}

// DefaultBounds are the command line's defaults: enough for every lesson's violation from the
// playground (tested), small enough to finish in seconds.
func DefaultBounds() Bounds {
	return Bounds{Depth: 10, Crashes: 1, ClockMoves: 2, MaxStates: 200_000, TimeLimit: 2 * time.Minute}
}

// Restore is how a state's database is brought back before its next move is tried.
type Restore string

// The ways to restore a state's database.
const (
	// RestoreMemory keeps an in-memory copy of each state's database (SQLite's serialize) and
	// copies it back over the file with the backup API.
	RestoreMemory Restore = "memory"
	// RestoreFile keeps a file copy of each state's database (VACUUM INTO) and copies it back
	// with the backup API.
	RestoreFile Restore = "file"
	// RestoreRows keeps a copy of each state's rows and puts them back with DELETEs and
	// INSERTs in one transaction: the schema stays as it is, and so does every connection's
	// prepared statements (a backup changes the schema's version, and every connection then
	// reads the schema and prepares its statements again). The default: the fastest measured.
	RestoreRows Restore = "rows"
	// RestoreReplay brings back the scenario's start and runs the state's whole schedule
	// again, every transaction of it.
	RestoreReplay Restore = "replay"
)

// MemoryImages is a database that copies itself in memory (store.DB).
type MemoryImages interface {
	Serialize(ctx context.Context) ([]byte, error)
	Deserialize(ctx context.Context, img []byte) error
}

// FileImages is a database that copies itself to a file and back (store.DB).
type FileImages interface {
	VacuumInto(ctx context.Context, path string) error
	RestoreFrom(ctx context.Context, path string) error
}

// RowCopies is a database that copies its rows and puts them back (store.DB).
type RowCopies interface {
	DumpRows(ctx context.Context) (any, error)
	LoadRows(ctx context.Context, copy any) error
}

// RetryColumns is a database that reads, in one statement and in Id order, what failed
// attempts left on every message (store.DB): with the status and attempts, the columns
// engine.Row leaves out (NextAttemptUtc, LastError), which a state's next moves depend on (a
// claim that honours the backoff skips a row not yet due). The state key holds them; a
// database that is not RetryColumns is keyed by its rows alone.
type RetryColumns interface {
	RetryStates(ctx context.Context) ([]engine.RetryState, error)
}

// StateRows is a copy of the rows (RowCopies' DumpRows, store.Rows) that answers the reads a
// state's key and checks make, as the database's own statements would: one read of the
// database for each state, not five.
type StateRows interface {
	Snapshot() []engine.Row
	Counts() engine.Counts
	EachTransactionID(fn func(key, id string) error) error
	RetryStates() []engine.RetryState
}

// RowDiffs is a database that, holding the rows of one copy, writes only the rows another
// copy has otherwise (store.DB).
type RowDiffs interface {
	LoadRowsOver(ctx context.Context, from, to any) error
}

// Config is one search.
type Config struct {
	Scenario *engine.Scenario
	// DB is the database the search runs on: a fresh one of the scenario's backend, with its
	// schema and no rows. It must be MemoryImages (or FileImages for RestoreFile).
	DB     engine.DB
	Bounds Bounds
	// Checks are the ids of the checks to search for; nil: SafetyChecks.
	Checks  []string
	Restore Restore // "": RestoreRows
	// TempDir holds RestoreFile's copies.
	TempDir string
	// Now is the wall clock, for the elapsed time, the time limit and the progress.
	Now func() time.Time
	// Progress, when set, is called every ProgressEvery with the figures so far.
	Progress      func(Stats)
	ProgressEvery time.Duration
	// NoSymmetry keeps states that differ only by which of two interchangeable workers is
	// which apart (reduce: renaming.go); NoSleepSets makes both orders of moves that commute
	// (reduce.go). Both off is the full search (--no-reduce).
	NoSymmetry, NoSleepSets bool
	// Checkpoint, when set, is called at the end of every level with the search so far
	// (checkpoint.go); Resume, when set, is where the search goes on from.
	Checkpoint func(*Checkpoint) error
	Resume     *Checkpoint
	// MoreDBs are more databases like DB (fresh, of its backend, with its schema and no rows):
	// with RestoreRows, one more worker searches on each, each expanding its part of every
	// level (parallel.go). The result is the same as with DB alone.
	MoreDBs []engine.DB
	// NoShares leaves out the point of no return's measure (witness.go): the lab's quick search.
	NoShares bool
	// slowReads, for tests: read the state's rows, counts and transaction ids with the
	// database's own statements, not from one copy of the rows (readOnce).
	slowReads bool
	// verifyReads, for tests: compare what readOnce derives with the statements' answers.
	verifyReads bool
	// verifyCommute, for tests: after each state's moves, make every pair the reduction calls
	// independent in both orders and fail the search if they end in different states.
	verifyCommute bool
}

// SafetyChecks are the checks a state in the middle of a run can break: once failed they stay
// failed whatever happens next. The others (processed-once, none-lost, recovered) are about a
// finished run: the middle of every run fails them.
func SafetyChecks() []string {
	return []string{engine.CheckOneOwner, engine.CheckWrittenOnce, engine.CheckNoViolations, engine.CheckNoDuplicates,
		engine.CheckOneCreation, engine.CheckProviderTxIDs, engine.CheckNoUndoneFinish, engine.CheckNoEarlyReclaim}
}

// Stats are the search's figures, every one counted. They add up: States = Distinct +
// SeenBefore + Pruned + Unstored.
type Stats struct {
	// States are the states the search met: the start, one per move made, and one per move the
	// partial-order reduction left out (Pruned).
	States int
	// Moves are the moves made: transitions, each a transaction or a step of the session.
	Moves int
	// Distinct are the states not seen before, the start included (with symmetry on, a state
	// and the same state with interchangeable workers swapped are one).
	Distinct int
	// SeenBefore are the states reached again: seen before, not explored twice.
	SeenBefore int
	// Pruned are the moves the partial-order reduction did not make: another order of the same
	// moves reaches the state they would.
	Pruned int
	// Unstored are new states the MaxStates bound kept out of the seen set: checked, not
	// explored further.
	Unstored int
	// Depth is the deepest level whose every state has been checked.
	Depth int
	// Frontier is how many states wait to be explored: at the end of a level, the next
	// level's; in a Progress report, every state queued so far and not yet expanded.
	Frontier int
	// ByDepth are, for each depth (0: the start), the states reached by a move made there and
	// how many of them broke a check.
	ByDepth []DepthCount
	// FirstViolation is when the first violation was found, from the start (0: none).
	FirstViolation time.Duration
	// Restores count the database copies brought back, Replayed the moves replayed in memory
	// (or, with RestoreReplay, run again).
	Restores, Replayed int
	Elapsed            time.Duration
	// Where the time went: restoring the database, replaying the session's memory, the
	// transitions themselves, the checks and the state's rows and hash, and copying databases.
	RestoreTime, ReplayTime, MoveTime, CheckTime, CopyTime time.Duration
	// KeyTime is reading the state's rows and hashing its key.
	KeyTime time.Duration
}

// DepthCount is one depth's states reached and how many of them broke a check.
type DepthCount struct{ States, Violating int }

// Violation is a shortest schedule that breaks a check.
type Violation struct {
	Schedule []Transition
	Failed   []engine.Check // the checks it broke, as the report shows them
	// Last is what the schedule's last move did, in the timeline's words.
	Last []string
	// Witness says why, in words (nil when the events name nothing).
	Witness *Witness
	// Shares are, for each prefix of the schedule (0: none of it, to all of it), the share of
	// its continuations of the schedule's remaining length that break a searched check (nil:
	// not measured); NoReturn is the move after which every continuation does (1-based).
	Shares   []float64
	NoReturn int
}

// Result is what a search found.
type Result struct {
	Scenario  string
	Checks    []string
	Bounds    Bounds
	Restore   Restore
	Violation *Violation // nil when no schedule within the bounds broke a check
	Stats
	// Exhausted: the search ran out of states before the depth bound: every reachable state
	// (within the crash, pause and clock bounds) was checked.
	Exhausted bool
	// Cut says what ended the search before its bound: "max-states" (new states were left
	// unexplored), "time-limit", or "interrupted" (the context ended); "" when nothing did.
	Cut string
	// FirstUnstored is the depth of the first state the MaxStates bound kept out: every
	// schedule up to that depth was checked.
	FirstUnstored int
	// Symmetry and SleepSets say which reductions the search used.
	Symmetry, SleepSets bool
	// Checkpointed is the last level saved to Config.Checkpoint (0: none).
	Checkpointed int
	// Broken are the ids of the checks broken by any state at the violation's depth (the
	// level is finished when a violation is found), sorted.
	Broken []string
}

// node is a state in the search: how it was reached, and what the database answered.
type node struct {
	parent *node
	t      Transition
	calls  []call
	depth  int
	used   used
	db     uint64       // the key of its database's copy
	rows   []engine.Row // its rows, for its clock moves
	key    [2]uint64    // its key in the seen set
	sleep  uint64       // the workers whose next action is asleep here (reduce.go)
	slept  []moveInfo   // what those actions do
	perm   int          // the renaming that gives its key (renaming.go)
	// order is where a sequential search makes it: its parent's place in the frontier and
	// its move's among the parent's. Of two arrivals at one new state in a level, the one
	// first in this order is kept, whichever worker made it first (parallel.go).
	order [2]int
	// dropped: another arrival at its state, first in order, is kept instead.
	dropped bool
}

// seenState is an entry of the seen set: the depth the state was first reached at, and its
// node while it waits to be explored (so that another arrival in the same level can wake
// moves in its sleep set).
type seenState struct {
	depth     int32
	violating bool
	failed    []engine.Check // a violating state's broken checks
	node      *node
}

// explorer is one search's state, or, when the search runs on several databases at once, one
// worker's: the seen set and the copies are shared, behind mu (parallel.go).
type explorer struct {
	cfg     Config
	mu      *sync.Mutex // guards seen, images and sh
	sh      *sharedState
	tape    *tapeDB
	sess    *engine.Session
	root    *node
	want    map[string]bool
	seen    map[[2]uint64]seenState
	perms   []*renaming // the symmetries (nil: the identity alone)
	images  map[uint64]*image
	dbAt    uint64 // the copy the database holds now
	dbKnown bool
	// cur is, with RestoreRows, a copy of the rows the database holds now (nil: unknown, after
	// a write whose state was not kept), so that a restore writes only the rows that differ.
	cur     any
	seq     int // file copies made
	atBound int // new states at the depth bound, left unexplored
	start   time.Time
	nextLog time.Time
	res     *Result
	vnode   *node         // the violation's state
	resumed time.Duration // the time the resumed checkpoint's search had run
	verr    error         // verifyCommute's finding
	buf     bytes.Buffer  // a state's text, hashed into its key
	cands   []candidate   // violations this worker found in the level
	helpers []*explorer   // the other workers, on Config.MoreDBs
}

// image is one database copy, and how many waiting states need it.
type image struct {
	// reads are the whole-database reads' answers on this copy (tapeDB.reads), handed back
	// to the tape when the copy is restored.
	reads map[string]any
	rows  any
	bytes []byte
	path  string
	refs  int
}

// Run searches cfg's scenario. It returns what it found, with the figures so far when the
// context ends or a bound cuts the search (an error only when the database fails).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Restore == "" {
		cfg.Restore = RestoreRows
	}
	if cfg.Now == nil {
		return nil, errors.New("explore: Config.Now is required")
	}
	if cfg.Checks == nil {
		cfg.Checks = SafetyChecks()
	}
	// The search's sessions check the safety checks, not the lesson's expectations: a copy of
	// the scenario without them spares every state's report from evaluating them (13 % of
	// aba-fencing's time).
	sc := *cfg.Scenario
	sc.Expect = nil
	cfg.Scenario = &sc
	switch cfg.Restore {
	case RestoreMemory, RestoreReplay:
		if _, ok := cfg.DB.(MemoryImages); !ok {
			return nil, fmt.Errorf("explore: this database cannot copy itself in memory (%T)", cfg.DB)
		}
	case RestoreRows:
		if _, ok := cfg.DB.(RowCopies); !ok {
			return nil, fmt.Errorf("explore: this database cannot copy its rows (%T)", cfg.DB)
		}
	case RestoreFile:
		if _, ok := cfg.DB.(FileImages); !ok {
			return nil, fmt.Errorf("explore: this database cannot copy itself to a file (%T)", cfg.DB)
		}
		if cfg.TempDir == "" {
			return nil, errors.New("explore: RestoreFile needs Config.TempDir")
		}
	default:
		return nil, fmt.Errorf("explore: unknown restore %q (rows, memory, file, replay)", cfg.Restore)
	}
	x := &explorer{cfg: cfg, tape: newTapeDB(cfg.DB), want: map[string]bool{}, seen: map[[2]uint64]seenState{},
		images: map[uint64]*image{}, start: cfg.Now(), perms: []*renaming{nil}, mu: &sync.Mutex{}, sh: &sharedState{}}
	for _, c := range cfg.Checks {
		x.want[c] = true
	}
	x.nextLog = x.start.Add(cfg.ProgressEvery)
	x.res = &Result{Scenario: cfg.Scenario.Name, Checks: cfg.Checks, Bounds: cfg.Bounds, Restore: cfg.Restore,
		Symmetry: !cfg.NoSymmetry, SleepSets: !cfg.NoSleepSets}
	defer x.close()
	if cfg.Restore == RestoreRows {
		for _, db := range cfg.MoreDBs {
			x.helpers = append(x.helpers, x.helper(db))
		}
	}
	err := x.search(ctx)
	x.res.Elapsed = cfg.Now().Sub(x.start) + x.resumed
	if err != nil && ctx.Err() != nil {
		x.res.Cut, err = "interrupted", nil
	}
	if x.res.Unstored > 0 && x.res.Cut == "" {
		x.res.Cut = "max-states"
	}
	if err == nil && x.verr != nil {
		err = x.verr
	}
	if v := x.res.Violation; err == nil && v != nil && x.vnode != nil {
		err = x.explain(ctx, v)
	}
	return x.res, err
}

// explain adds the witness and the shares to the violation found (the shares only when they
// cost less than shareBudget moves; an interrupt leaves them out).
func (x *explorer) explain(ctx context.Context, v *Violation) error {
	evs, err := x.movesEvents(ctx, x.vnode)
	if err != nil {
		return err
	}
	v.Witness = witness(v, evs)
	if x.cfg.NoShares {
		return nil
	}
	shares, err := x.shares(ctx, x.vnode)
	switch {
	case errors.Is(err, errShareBudget) || ctx.Err() != nil:
		return nil
	case err != nil:
		return err
	}
	v.Shares, v.NoReturn = shares, noReturn(shares)
	return nil
}

func (x *explorer) close() {
	for _, h := range x.helpers {
		h.close()
	}
	if x.sess != nil {
		x.sess.Close()
	}
	x.tape.close()
	for _, im := range x.images {
		if im.path != "" {
			os.Remove(im.path)
		}
	}
}

// count adds a state reached at depth d, violating or not.
func (x *explorer) count(d int, violating bool) {
	for len(x.res.ByDepth) <= d {
		x.res.ByDepth = append(x.res.ByDepth, DepthCount{})
	}
	x.res.ByDepth[d].States++
	if violating {
		x.res.ByDepth[d].Violating++
	}
	x.res.States++
}

// search is the breadth-first search, level by level. A level in which a violation is found is
// finished (for the share of its states that violate), and the search ends there.
func (x *explorer) search(ctx context.Context) error {
	x.tape.begin(live, nil)
	s, err := engine.NewSessionWith(ctx, x.cfg.Scenario, x.tape, engine.SessionOptions{Seed: true})
	if err != nil {
		return fmt.Errorf("explore: start %s: %w", x.cfg.Scenario.Name, err)
	}
	x.sess = s
	if !x.cfg.NoSymmetry {
		x.perms = renamings(s)
	}
	x.root = &node{calls: x.tape.take()}
	rows, dbKey, key, perm, err := x.look(ctx, s)
	if err != nil {
		return err
	}
	failed, err := x.checks(ctx, s)
	if err != nil {
		return err
	}
	x.count(0, len(failed) > 0)
	x.res.Distinct++
	if len(failed) > 0 {
		x.res.Violation = &Violation{Failed: failed}
		return nil
	}
	x.root.key, x.root.perm = withUsed(key, x.root.used), perm
	x.seen[x.root.key] = seenState{node: x.root}
	x.sh.progress = x.res
	x.root.rows = rows
	if x.root.db, err = x.keep(ctx, dbKey); err != nil {
		return err
	}
	x.images[x.root.db].refs++ // the start's copy is kept to the end, for the shares (witness.go)
	frontier := []*node{x.root}
	x.sh.waiting.Store(1)
	first := 0
	if c := x.cfg.Resume; c != nil {
		if frontier, err = x.resume(ctx, c); err != nil {
			return err
		}
		first = c.Depth
	}
	for depth := first; depth < x.cfg.Bounds.Depth && len(frontier) > 0; depth++ {
		next, err := x.level(ctx, frontier)
		if err != nil || x.res.Cut != "" {
			return err
		}
		frontier = next
		x.res.Depth = depth + 1
		x.res.Frontier = len(frontier)
		if x.res.Violation != nil {
			return nil
		}
		if x.cfg.Checkpoint != nil && depth+1 < x.cfg.Bounds.Depth && len(frontier) > 0 {
			if err := x.checkpoint(depth+1, frontier); err != nil {
				return fmt.Errorf("explore: checkpoint: %w", err)
			}
			x.res.Checkpointed = depth + 1
		}
	}
	x.res.Exhausted = len(frontier) == 0 && x.atBound == 0
	return nil
}

// expand tries every move from n, the pos-th state of its level's frontier, and returns the new
// states worth exploring.
func (x *explorer) expand(ctx context.Context, n *node, pos int) ([]*node, error) {
	s, err := x.restore(ctx, n)
	if err != nil {
		return nil, err
	}
	moves := enabled(ctx, s, n.rows, n.used, x.cfg.Bounds)
	n.rows = nil
	asleep := sleeping(n)
	var out []*node
	var done []moveInfo
	fresh := true // the session stands at n
	for i, t := range moves {
		if err := x.stop(ctx); err != nil || x.cut() != "" {
			return out, err
		}
		if sleeps(t.Kind) && n.sleep&bit(t.Kind, t.Worker) != 0 {
			x.res.Pruned++
			x.count(n.depth+1, false)
			continue
		}
		if !fresh {
			if s, err = x.restore(ctx, n); err != nil {
				return out, err
			}
		}
		fresh = false
		mi := infoOf(s, t)
		before := s.Ledger().EventCount()
		t0 := x.cfg.Now()
		if err := apply(ctx, s, t); err != nil {
			return out, fmt.Errorf("explore: %s after %d moves: %w", x.cfg.Scenario.Name, n.depth, err)
		}
		calls := x.tape.take()
		x.res.MoveTime += x.cfg.Now().Sub(t0)
		x.res.Moves++
		mi.learn(calls)
		if wrote(calls) {
			x.dbKnown, x.cur = false, nil
		}
		rows, dbKey, key, perm, err := x.look(ctx, s)
		if err != nil {
			return out, err
		}
		if !x.dbKnown {
			x.mu.Lock()
			if im, ok := x.images[dbKey]; ok {
				// The move wrote the database back to a copy kept: a restore to another copy
				// need write only the rows that differ.
				x.dbAt, x.dbKnown, x.cur = dbKey, true, im.rows
			}
			x.mu.Unlock()
		}
		child := &node{parent: n, t: t, calls: calls, depth: n.depth + 1, used: n.used.after(t), perm: perm, order: [2]int{pos, i}}
		if !x.cfg.NoSleepSets && len(s.Workers()) <= 32 {
			for _, u := range append(asleep, done...) {
				if independent(u, mi) {
					child.sleep |= bit(u.kind, u.worker)
					child.slept = append(child.slept, u)
				}
			}
		}
		done = append(done, mi)
		child.key = withUsed(key, child.used)
		keep, err := x.settle(ctx, s, child, before, dbKey)
		if err != nil {
			return out, err
		}
		if keep {
			child.rows = rows
			out = append(out, child)
		}
	}
	if x.cfg.verifyCommute {
		x.verify(ctx, n, moves, done)
	}
	return out, nil
}

// settle records child, the state a move reached from its parent in session s (before: the
// ledger's event count before the move; dbKey: its database's copy): seen before, a
// violation, past a bound, or new. keep: it is to be explored, its database kept.
func (x *explorer) settle(ctx context.Context, s *engine.Session, child *node, before int, dbKey uint64) (keep bool, err error) {
	x.mu.Lock()
	was, seen := x.seen[child.key]
	x.mu.Unlock()
	var failed []engine.Check
	if !seen {
		// A state not seen when looked up: its checks. (Another worker may make it
		// meanwhile: then it is seen before after all, below.)
		if failed, err = x.checks(ctx, s); err != nil {
			return false, err
		}
	}
	x.mu.Lock()
	if was, seen = x.seen[child.key]; seen {
		kept := x.arrivedAgain(child, was, s, before)
		x.mu.Unlock()
		if kept { // first in order of the arrivals at a state new in this level (parallel.go)
			if child.db, err = x.keep(ctx, dbKey); err != nil {
				return false, err
			}
			return true, nil
		}
		return false, nil
	}
	x.count(child.depth, len(failed) > 0)
	if len(failed) > 0 {
		for _, c := range failed {
			if !slices.Contains(x.res.Broken, c.ID) {
				x.res.Broken = append(x.res.Broken, c.ID)
				slices.Sort(x.res.Broken)
			}
		}
		x.res.Distinct++
		x.seen[child.key] = seenState{depth: int32(child.depth), violating: true, failed: failed}
		x.found(child, failed, s, before)
		x.mu.Unlock()
		return false, nil
	}
	if x.cfg.Bounds.MaxStates > 0 && len(x.seen) >= x.cfg.Bounds.MaxStates {
		if x.res.Unstored == 0 || child.depth < x.res.FirstUnstored {
			x.res.FirstUnstored = child.depth
		}
		x.res.Unstored++
		x.mu.Unlock()
		return false, nil
	}
	x.res.Distinct++
	if child.depth >= x.cfg.Bounds.Depth || x.sh.violated {
		x.seen[child.key] = seenState{depth: int32(child.depth)}
		if !x.sh.violated {
			x.atBound++ // not explored: the depth bound
		}
		x.mu.Unlock()
		return false, nil
	}
	x.seen[child.key] = seenState{depth: int32(child.depth), node: child}
	x.mu.Unlock()
	if child.db, err = x.keep(ctx, dbKey); err != nil {
		return false, err
	}
	x.sh.waiting.Add(1)
	return true, nil
}

// stop reports a bound that ends the search: the context, or the time limit. It also calls
// Progress when it is due.
func (x *explorer) stop(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := x.cfg.Now()
	if lim := x.cfg.Bounds.TimeLimit; lim > 0 && now.Sub(x.start) >= lim {
		x.setCut("time-limit")
	}
	if x.cfg.Progress != nil && x.cfg.ProgressEvery > 0 && !now.Before(x.nextLog) && x.sh.progress != nil {
		x.nextLog = now.Add(x.cfg.ProgressEvery)
		st := x.sh.progress.Stats
		st.Elapsed, st.Frontier = now.Sub(x.start), int(x.sh.waiting.Load())
		x.cfg.Progress(st)
	}
	return nil
}

// wrote reports whether a move's calls could have changed the database.
func wrote(calls []call) bool {
	for _, c := range calls {
		if writes(c.op) {
			return true
		}
	}
	return false
}

// schedule is the moves from the start to n.
func (n *node) schedule() []Transition {
	var out []Transition
	for _, p := range n.path() {
		out = append(out, p.t)
	}
	return out
}

// look reads the state the session stands in: its rows, the key of its database (the rows and
// what failed attempts left on them, hashed) and its state key (those and the session's memory,
// hashed, under the renaming that gives the least key, which it returns).
func (x *explorer) look(ctx context.Context, s *engine.Session) (rows []engine.Row, dbKey uint64, key [2]uint64, perm int, err error) {
	t0 := x.cfg.Now()
	defer func() { x.res.KeyTime += x.cfg.Now().Sub(t0) }()
	x.tape.mode = direct
	defer func() { x.tape.mode = live }()
	if err := x.readOnce(ctx); err != nil {
		return nil, 0, key, 0, err
	}
	if rows, err = s.DB().Snapshot(ctx); err != nil {
		return nil, 0, key, 0, fmt.Errorf("explore: read the rows: %w", err)
	}
	var retry []engine.RetryState
	if rc, ok := x.cfg.DB.(RetryColumns); ok {
		// A whole-database read: answered from memory while the database has not changed.
		v, err := x.tape.read("retry", func() (any, error) { return rc.RetryStates(ctx) })
		if err != nil {
			return nil, 0, key, 0, fmt.Errorf("explore: read the retry columns: %w", err)
		}
		retry, _ = v.([]engine.RetryState)
	}
	key, perm = canonicalKey(rows, retry, s.Probe(), x.perms, &x.buf)
	return rows, dbKeyOf(rows, retry), key, perm, nil
}

// readOnce reads the state's rows once, with RestoreRows, when the database has changed since
// its last read: a copy of both tables (DumpRows) that answers the rows' view, the counts, the
// transaction ids and the retry columns (StateRows), handed to the tape as the answers of
// those reads, and kept as the copy keep makes of this state.
func (x *explorer) readOnce(ctx context.Context) error {
	if x.cfg.Restore != RestoreRows || x.cfg.slowReads {
		return nil
	}
	if _, ok := x.tape.reads["dump"]; ok {
		return nil
	}
	dump, err := x.cfg.DB.(RowCopies).DumpRows(ctx)
	if err != nil {
		return fmt.Errorf("explore: read the rows: %w", err)
	}
	sr, ok := dump.(StateRows)
	if !ok {
		return nil
	}
	var ids []txID
	if err := sr.EachTransactionID(func(k, id string) error { ids = append(ids, txID{k, id}); return nil }); err != nil {
		return err
	}
	rows := sr.Snapshot()
	if x.tape.reads == nil {
		x.tape.reads = map[string]any{}
	}
	answers := map[string]any{"dump": dump, "snapshot": rows, "rows": rows, "counts": sr.Counts(), "txids": ids, "retry": sr.RetryStates()}
	for op, v := range answers {
		x.tape.reads[op] = v
	}
	if x.cfg.verifyReads {
		return x.sameAsStatements(ctx, answers)
	}
	return nil
}

// sameAsStatements, for tests (Config.verifyReads): the answers readOnce derived from one copy
// of the rows must be what the database's own statements read.
func (x *explorer) sameAsStatements(ctx context.Context, answers map[string]any) error {
	db := x.cfg.DB
	rows, err := db.Snapshot(ctx)
	if err != nil {
		return err
	}
	counts, err := db.Counts(ctx)
	if err != nil {
		return err
	}
	var ids []txID
	if err := db.EachTransactionID(ctx, func(k, id string) error { ids = append(ids, txID{k, id}); return nil }); err != nil {
		return err
	}
	var retry []engine.RetryState
	if rc, ok := db.(RetryColumns); ok {
		if retry, err = rc.RetryStates(ctx); err != nil {
			return err
		}
	}
	for op, v := range map[string]any{"snapshot": rows, "counts": counts, "txids": ids, "retry": retry} {
		if !reflect.DeepEqual(normal(v), normal(answers[op])) {
			return fmt.Errorf("explore: %s from the copy of the rows: %+v; the statement reads %+v", op, answers[op], v)
		}
	}
	return nil
}

// normal makes empty slices nil, for comparing answers.
func normal(v any) any {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.Len() == 0 {
		return nil
	}
	return v
}

// checks are the searched checks the state the session stands in fails. A state seen before
// is not checked again: its checks are a function of its key.
func (x *explorer) checks(ctx context.Context, s *engine.Session) (failed []engine.Check, err error) {
	t0 := x.cfg.Now()
	defer func() { x.res.CheckTime += x.cfg.Now().Sub(t0) }()
	x.tape.mode = direct
	defer func() { x.tape.mode = live }()
	sum, err := s.Summarize(ctx)
	if err != nil {
		return nil, fmt.Errorf("explore: the checks: %w", err)
	}
	for _, c := range sum.Checks {
		if x.want[c.ID] && !c.OK {
			failed = append(failed, c)
		}
	}
	return failed, nil
}

// keep makes sure a copy of the database as it is now (whose key is k, dbKeyOf) is kept, for a
// state that waits to be explored, and returns k.
func (x *explorer) keep(ctx context.Context, k uint64) (uint64, error) {
	x.mu.Lock()
	if im, ok := x.images[k]; ok {
		im.refs++
		x.mu.Unlock()
		x.dbAt, x.dbKnown, x.cur = k, true, im.rows
		return k, nil
	}
	x.mu.Unlock()
	t0 := x.cfg.Now()
	defer func() { x.res.CopyTime += x.cfg.Now().Sub(t0) }()
	im := &image{refs: 1}
	var err error
	switch {
	case x.cfg.Restore == RestoreRows:
		if d, ok := x.tape.reads["dump"]; ok {
			im.rows = d // the copy readOnce made of the database as it is now
		} else {
			im.rows, err = x.cfg.DB.(RowCopies).DumpRows(ctx)
		}
		x.cur = im.rows
	case x.cfg.Restore == RestoreFile:
		x.seq++
		im.path = filepath.Join(x.cfg.TempDir, "state-"+strconv.Itoa(x.seq)+".db")
		err = x.cfg.DB.(FileImages).VacuumInto(ctx, im.path)
	case x.cfg.Restore == RestoreMemory || x.root.db == 0 && len(x.images) == 0:
		im.bytes, err = x.cfg.DB.(MemoryImages).Serialize(ctx)
	default:
		return x.root.db, nil // replay: only the start is kept
	}
	if err != nil {
		return 0, fmt.Errorf("explore: copy the database: %w", err)
	}
	im.reads = maps.Clone(x.tape.reads)
	x.mu.Lock()
	if had, ok := x.images[k]; ok { // another worker kept the same copy meanwhile
		had.refs++
		im = had
	} else {
		x.images[k] = im
	}
	x.mu.Unlock()
	x.dbAt, x.dbKnown = k, true
	return k, nil
}

// release drops a waiting state's claim on its database copy.
func (x *explorer) release(k uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	im, ok := x.images[k]
	if !ok || x.cfg.Restore == RestoreReplay {
		return
	}
	if im.refs--; im.refs <= 0 {
		if im.path != "" {
			os.Remove(im.path)
		}
		delete(x.images, k)
	}
}

// restore brings the database and a new session to state n, and returns the session.
func (x *explorer) restore(ctx context.Context, n *node) (*engine.Session, error) {
	path := n.path()
	if x.sess != nil {
		x.sess.Close()
		x.sess = nil
	}
	t0 := x.cfg.Now()
	target := n.db
	if x.cfg.Restore == RestoreReplay {
		target = x.root.db
	}
	if !x.dbKnown || x.dbAt != target {
		x.mu.Lock()
		im := x.images[target]
		x.mu.Unlock()
		if im == nil {
			return nil, fmt.Errorf("explore: no copy of the database for a waiting state")
		}
		var err error
		switch {
		case im.rows != nil:
			err = x.loadRows(ctx, im.rows)
		case im.path != "":
			err = x.cfg.DB.(FileImages).RestoreFrom(ctx, im.path)
		default:
			err = x.cfg.DB.(MemoryImages).Deserialize(ctx, im.bytes)
		}
		if err != nil {
			return nil, fmt.Errorf("explore: restore the database: %w", err)
		}
		x.tape.reads = maps.Clone(im.reads)
		x.dbAt, x.dbKnown, x.cur = target, true, im.rows
		x.res.Restores++
	}
	t1 := x.cfg.Now()
	x.res.RestoreTime += t1.Sub(t0)
	segs := [][]call{x.root.calls}
	if x.cfg.Restore != RestoreReplay {
		for _, m := range path {
			segs = append(segs, m.calls)
		}
	}
	x.tape.begin(replay, segs)
	s, err := engine.NewSessionWith(ctx, x.cfg.Scenario, x.tape, engine.SessionOptions{Seed: true})
	if err != nil {
		return nil, fmt.Errorf("explore: replay the start: %w", err)
	}
	x.sess = s
	if x.cfg.Restore == RestoreReplay {
		x.tape.mode = live
		x.dbKnown = len(path) == 0
	}
	for _, m := range path {
		if err := apply(ctx, s, m.t); err != nil {
			return nil, fmt.Errorf("explore: replay %s: %w", m.t, err)
		}
		x.res.Replayed++
	}
	if x.cfg.Restore != RestoreReplay && !x.tape.drained() {
		return nil, fmt.Errorf("%w: calls left on the tape", errDiverged)
	}
	x.tape.take()
	x.tape.mode = live
	x.res.ReplayTime += x.cfg.Now().Sub(t1)
	return s, nil
}

// loadRows puts the rows of a copy back: only those that differ when the database is known to
// hold another kept copy, all of them otherwise.
func (x *explorer) loadRows(ctx context.Context, rows any) error {
	if d, ok := x.cfg.DB.(RowDiffs); ok && x.cur != nil {
		return d.LoadRowsOver(ctx, x.cur, rows)
	}
	return x.cfg.DB.(RowCopies).LoadRows(ctx, rows)
}

// path is the nodes from the start (excluded) to n (included).
func (n *node) path() []*node {
	var out []*node
	for ; n != nil && n.parent != nil; n = n.parent {
		out = append(out, n)
	}
	slices.Reverse(out)
	return out
}
