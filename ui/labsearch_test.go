package ui

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/store/storetest"
	"leaselab/ui/deadletters"
)

// The lab's own search (issue 28): the lab model, driven by Update and View with no terminal,
// plays sequences of a person's moves from each lesson's start — a step, every toggle the lesson
// shows flipped (and flipped back), a crash, a restart, the clock, a step back, an answer right
// or wrong, a stray key while a question is open, the free run, the run to the end, V and X —
// and after every move checks the screen at both sizes against the frame (labsearch_checks_test.go)
// and probes every key (labsearch_keys_test.go). Breadth-first and exhaustive to a depth for
// the short lessons, seeded random walks for all of them; states are merged by a key of the
// frame. A failure prints its moves as a line that TestLabSearchReplay plays again:
//
//	LEASELAB_LABSEARCH_REPLAY='after: space space A l e' go test ./ui -run TestLabSearchReplay -v
//
// LEASELAB_LABSEARCH_DEPTH and LEASELAB_LABSEARCH_WALKS search deeper and longer;
// LEASELAB_LABSEARCH_SEED picks the walks' seed; LEASELAB_LABSEARCH_STRICT=1 fails on the
// invariants still marked pending (see pendingKinds).

// searchSizes are the sizes every state is drawn and checked at: the primary first (the
// search presses its keys at that size), then the other.
var searchSizes = [2][2]int{{80, 24}, {120, 40}}

// searchPlan is how far the search goes in one lesson: an exhaustive depth (0: none) and how
// many random walks of how many moves.
type searchPlan struct {
	depth       int
	walks, long int
}

// planFor is the search of a lesson in go test ./... (short: the race pass), or as the
// environment asks for. A lesson of hundreds of messages is walked, not searched.
func planFor(name string) searchPlan {
	p := searchPlan{depth: 2, walks: 2, long: 40}
	switch name {
	case "many-workers":
		p = searchPlan{depth: 0, walks: 2, long: 25}
	case "skip-locked": // each open makes a schema on the PostgreSQL server
		p.depth = 1
	}
	if testing.Short() {
		p.depth, p.walks = min(p.depth, 1), 1
	}
	if d, err := strconv.Atoi(os.Getenv("LEASELAB_LABSEARCH_DEPTH")); err == nil {
		p.depth = d
	}
	if w, err := strconv.Atoi(os.Getenv("LEASELAB_LABSEARCH_WALKS")); err == nil {
		p.walks = w
		p.long = max(p.long, 80)
	}
	return p
}

// searchSeed is the walks' seed: LEASELAB_LABSEARCH_SEED, or 1.
func searchSeed() uint64 {
	if s, err := strconv.ParseUint(os.Getenv("LEASELAB_LABSEARCH_SEED"), 10, 64); err == nil {
		return s
	}
	return 1
}

// searcher searches one lesson.
type searcher struct {
	t      *testing.T
	lesson string
	open   func(tb testing.TB, lesson string) *lab
	seen   map[uint64]bool
	probed map[uint64]bool
	// counts for the report
	sequences, states, moves int
	views                    [2]int
	viewTime                 [2]time.Duration
	found                    []string // violations, each with its replay line
	pending                  map[string]int
	answered                 bool // the last move answered a question
}

// TestLabSearch searches every built-in lesson (skip-locked on PostgreSQL: LEASELAB_PG).
func TestLabSearch(t *testing.T) {
	skipSweepUnderRace(t)
	seed := searchSeed()
	for _, name := range assets.Names() {
		t.Run(name, func(t *testing.T) {
			s := newSearcher(t, name)
			start := time.Now()
			plan := planFor(name)
			s.bfs(plan.depth)
			r := rand.New(rand.NewPCG(seed, uint64(len(name))))
			for i := 0; i < plan.walks; i++ {
				s.walk(r, plan.long)
			}
			s.report(plan, time.Since(start))
		})
	}
}

// TestLabSearchReplay plays the line in LEASELAB_LABSEARCH_REPLAY, checking after every move
// as the search did.
func TestLabSearchReplay(t *testing.T) {
	line := os.Getenv("LEASELAB_LABSEARCH_REPLAY")
	if line == "" {
		t.Skip("LEASELAB_LABSEARCH_REPLAY is empty: set it to a line TestLabSearch printed")
	}
	replaySearchLine(t, line)
}

// replaySearchLine plays a line of the search ("LESSON: KEY KEY …") with every check after
// every move, and fails on the first violation.
func replaySearchLine(t *testing.T, line string) *lab {
	t.Helper()
	lesson, keys, ok := strings.Cut(line, ":")
	if !ok {
		t.Fatalf("not a search line (LESSON: KEYS…): %q", line)
	}
	s := newSearcher(t, strings.TrimSpace(lesson))
	l := s.open(t, s.lesson)
	var path []string
	s.checkState(l, path)
	for _, k := range strings.Fields(keys) {
		path = append(path, k)
		s.press(l, k)
		s.checkState(l, path)
	}
	s.failIfFound()
	return l
}

// newSearcher is a search of lesson, on SQLite or, for a lesson that needs it, PostgreSQL.
func newSearcher(t *testing.T, lesson string) *searcher {
	s := &searcher{t: t, lesson: lesson, seen: map[uint64]bool{}, probed: map[uint64]bool{}, pending: map[string]int{}}
	w, h := searchSizes[0][0], searchSizes[0][1]
	// One opener for every lab of the search: each open closes the session before it.
	cfg := Config{Scenarios: sqliteLessons(), Open: opener(t, engine.Overrides{})}
	if !slices.Contains(cfg.Scenarios, lesson) && slices.Contains(assets.Names(), lesson) {
		storetest.PostgresURL(t) // skips, with its message, without LEASELAB_PG
		cfg = Config{Scenarios: assets.Names(), Open: pgOpener(t)}
	}
	s.open = func(tb testing.TB, lesson string) *lab { return newLabOn(tb, lesson, w, h, cfg) }
	return s
}

// bfs plays every sequence of moves up to depth from the lesson's start, breadth-first,
// expanding each state the frame's key has not seen.
func (s *searcher) bfs(depth int) {
	level := [][]string{nil}
	root := s.open(s.t, s.lesson)
	s.checkState(root, nil)
	s.seen[s.key(root)] = true
	for d := 0; d < depth && len(level) > 0; d++ {
		var next [][]string
		for _, path := range level {
			l := s.replay(path)
			at := s.key(l)
			for _, mv := range s.movesAt(l) {
				if l == nil {
					l = s.replay(path)
				}
				p := append(slices.Clip(path), mv)
				s.sequences++
				s.press(l, mv)
				s.checkState(l, p)
				k := s.key(l)
				if !s.seen[k] && !isFreeMove(mv) {
					s.seen[k] = true
					next = append(next, p)
				}
				if k != at || isFreeMove(mv) {
					l = nil // the next move starts from path's state again
				}
			}
		}
		level = next
	}
	s.states += len(s.seen)
}

// walk plays one seeded random sequence of n moves from the lesson's start.
func (s *searcher) walk(r *rand.Rand, n int) {
	l := s.open(s.t, s.lesson)
	var path []string
	s.sequences++
	for i := 0; i < n; i++ {
		moves := s.movesAt(l)
		// Steps and answers more often than the rest, so that a walk gets through the lesson.
		mv := moves[r.IntN(len(moves))]
		if r.IntN(2) == 0 {
			mv = moves[0]
		}
		if f := l.m.frame; f != nil && f.Done {
			if l.m.track.Line.Pos > maxWalkBack {
				return // a step back from here replays the whole run: the short runs' walks cover it
			}
			if r.IntN(3) > 0 {
				mv = []string{"b", "V", "space", "g"}[r.IntN(4)]
			}
		}
		path = append(path, mv)
		s.press(l, mv)
		s.checkState(l, path)
		if k := s.key(l); !s.seen[k] {
			s.seen[k] = true
			s.states++
		}
	}
}

// maxWalkBack is how long a run a walk goes on from once it is done: a step back from the end
// of a run of thousands of steps (many-workers, or a watchdog's 10,000) rebuilds it all.
const maxWalkBack = 300

// replay opens the lesson and presses path, without checks (the search checked it on the way).
func (s *searcher) replay(path []string) *lab {
	l := s.open(s.t, s.lesson)
	for _, k := range path {
		s.press(l, k)
	}
	return l
}

// movesAt are the moves a person can make now, the most useful first: while a question is open,
// the right answer, a wrong one, a stray space, b and a (the keys of step back and the atomic
// claim), esc, ?; otherwise a step, every toggle key that is on, a crash, a restart, the clock,
// a step back, the run to the end, explore, ?, the free run, and a redrive when there is a dead
// letter.
func (s *searcher) movesAt(l *lab) []string {
	m := l.m
	if q := m.ask.Open; q != nil {
		letters := m.ask.Keys.Letters()
		right := letters[q.Right] // the answer the lesson expects as written; the run decides which is right
		wrong := letters[(q.Right+1)%len(q.Answers)]
		return []string{right, wrong, "space", "b", "a", "esc", "?"}
	}
	moves := []string{"space"}
	for _, b := range m.keys.Toggles {
		if b.Enabled() {
			moves = append(moves, b.Keys()[0])
		}
	}
	moves = append(moves, "x", "r", "f", "+", "b", "e", "X", "?", "g")
	if len(deadletters.DeadLettered(m.frame)) > 0 {
		moves = append(moves, "V")
	}
	return moves
}

// isFreeMove is a move the breadth-first search checks but goes no further from: the free
// run, whose workers run on their own goroutines, so that what follows it is not the same twice,
// and the run to the end, whose end the walks go on from (a step back from it replays the run).
func isFreeMove(mv string) bool { return mv == "g" || mv == "e" }

// press makes one move: a key by its name ("space", "esc", "A", "l"); g free-runs the workers
// for a few polls and stops them; e runs to the end.
func (s *searcher) press(l *lab, mv string) {
	s.moves++
	s.answered = l.m.ask.Open != nil && slices.Contains(l.m.ask.Keys.Answer.Keys(), mv)
	l.send(searchKey(mv))
	switch {
	case mv == "g" && l.m.free.on:
		for i := 0; i < 3 && l.poll(); i++ {
			time.Sleep(3 * time.Millisecond)
		}
		l.send(searchKey("g"))
		for l.m.free.on && l.poll() {
		}
	case mv == "e":
		for i := 0; i < 1000 && l.m.finish.on; i++ {
			l.tickAll(1)
		}
	}
}

// searchKey is the key message of a move's name.
func searchKey(name string) tea.KeyMsg {
	switch name {
	case "space":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	}
	return keyMsg(name)
}

// key is the state's key for merging: what the frame holds (rows, workers, settings, clock,
// script, ledgers) and the lab's own state that changes what a key does (a question, the score,
// whether there is a step to go back to, the free run, e).
func (s *searcher) key(l *lab) uint64 {
	h := fnv.New64a()
	m := l.m
	f := m.frame
	if f != nil {
		fmt.Fprintf(h, "%+v|%v|%v|%d/%d|%+v|", f.Settings, f.Now.UnixNano(), f.Done, f.ScriptIndex, f.ScriptTotal, f.Total)
		for _, r := range f.Rows {
			fmt.Fprintf(h, "%+v;", r)
		}
		for _, w := range f.Workers {
			fmt.Fprintf(h, "%+v;", w)
		}
		if f.Rescuer != nil {
			fmt.Fprintf(h, "%+v", *f.Rescuer)
		}
	}
	q := ""
	if m.ask.Open != nil {
		q = m.ask.Open.Text
	}
	fmt.Fprintf(h, "|%s|%s|%v|%v|%v", q, m.ask.Score(m.track.Line), m.track.Line.Pos > 0, m.free.on, m.finish.on)
	return h.Sum64()
}

// line is a replayable line for path.
func (s *searcher) line(path []string) string {
	return s.lesson + ": " + strings.Join(path, " ")
}

// report logs the search's figures, and fails with the violations found.
func (s *searcher) report(p searchPlan, took time.Duration) {
	s.t.Logf("%s: depth %d, %d walks of %d moves: %d sequences, %d moves, %d distinct states; views checked %d at %dx%d (%v), %d at %dx%d (%v); %v in all",
		s.lesson, p.depth, p.walks, p.long, s.sequences, s.moves, s.states,
		s.views[0], searchSizes[0][0], searchSizes[0][1], s.viewTime[0].Round(time.Millisecond),
		s.views[1], searchSizes[1][0], searchSizes[1][1], s.viewTime[1].Round(time.Millisecond), took.Round(time.Millisecond))
	for _, kind := range slices.Sorted(maps.Keys(s.pending)) {
		s.t.Logf("%s: pending (%s): %d of %q, not failed until it lands (LEASELAB_LABSEARCH_STRICT=1 fails them)",
			s.lesson, pendingKinds[kind], s.pending[kind], kind)
	}
	s.failIfFound()
}

// failIfFound fails with the violations found, each once, with its line.
func (s *searcher) failIfFound() {
	if len(s.found) == 0 {
		return
	}
	shown := s.found[:min(len(s.found), 40)]
	s.t.Errorf("%d violations; the first %d, each with the moves that found it (replay with LEASELAB_LABSEARCH_REPLAY='LINE' go test ./ui -run TestLabSearchReplay -v):\n%s",
		len(s.found), len(shown), strings.Join(shown, "\n\n"))
}
