package ui

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
	"leaselab/ui/checks"
	"leaselab/ui/common"
	"leaselab/ui/ledgers"
)

// The search's checks after every move (labsearch_test.go): the frame's words against the
// frame's counts and the table, and each screen against what it must not cut or contradict.

// Kinds of violation. Each is one invariant, and the search fails on every one it finds.
// pendingKinds are kinds that are counted and logged but fail only with
// LEASELAB_LABSEARCH_STRICT=1, for an invariant whose fix has not landed yet: none today.
const (
	kindInternal = "internal error text on screen"
	kindCut      = "something a person needs is cut"
	kindVerdict  = "verdict, expectations and status disagree"
	kindCheck    = "a check's words disagree with its mark or the table"
	kindFigure   = "a figure on screen is not the frame's"
	kindKeys     = "keys and the ? screen disagree"
	kindQuestion = "a question's graded answer is not what the step did"
	// The engine's own words: a check's detail against the table, a verdict beside its
	// expectations after a mid-run toggle, an event's sentence.
	kindCheckWords   = "a check's detail disagrees with the table"
	kindVerdictWords = "a verdict disagrees with its expectations"
	kindEventText    = "internal error text in an event's sentence"
)

// pendingKinds are the kinds the search counts and logs but does not fail on (without
// LEASELAB_LABSEARCH_STRICT=1), each with who owns the fix. Empty: every kind fails.
var pendingKinds = map[string]string{}

// violate records a violation of kind at path, once per kind and message shape.
func (s *searcher) violate(kind string, path []string, size string, msg, screen string) {
	if _, pending := pendingKinds[kind]; pending && !strictSearch() {
		s.pending[kind]++
		return
	}
	shape := kind + regexp.MustCompile(`[0-9]+`).ReplaceAllString(msg, "#")
	for _, f := range s.found {
		if strings.HasPrefix(f, "["+shape+"]") {
			return
		}
	}
	entry := fmt.Sprintf("[%s] %s: %s (at %s)\n  line: %s", shape, kind, msg, size, s.line(path))
	if screen != "" {
		entry += "\n" + indent(screen)
	}
	s.found = append(s.found, entry)
}

func strictSearch() bool { return envSet("LEASELAB_LABSEARCH_STRICT") }

func indent(screen string) string {
	return "    | " + strings.ReplaceAll(screen, "\n", "\n    | ")
}

// checkState checks the lab after a move: the frame once, each screen size, and (once per
// distinct state) every key.
func (s *searcher) checkState(l *lab, path []string) {
	s.checkFrame(l, path)
	for i, sz := range searchSizes {
		if i > 0 {
			l.send(windowSize(sz[0], sz[1]))
		}
		start := time.Now()
		v := l.view()
		s.checkScreen(l, path, v, sz)
		s.views[i]++
		s.viewTime[i] += time.Since(start)
	}
	l.send(windowSize(searchSizes[0][0], searchSizes[0][1]))
	if k := probeKey(l.m); !s.probed[k] {
		s.probed[k] = true
		s.probeKeys(l, path)
	}
}

// internalText is what only a program's insides say: Go's formatting errors, a nil, an error
// passed through as it came, the engine's refusal by its own words.
var internalText = regexp.MustCompile(`%!|<nil>|action not possible|runtime error|panic:|context canceled|sql: |SQLITE_|database is locked|\berror: `)

// checkFrame checks the frame's words against its counts and its table, once per move.
func (s *searcher) checkFrame(l *lab, path []string) {
	m, f := l.m, l.m.frame
	if m.status.Level == common.LevelError {
		s.violate(kindInternal, path, "any", "an error in the status line: "+m.status.Text, "")
	}
	if f == nil || f.Summary == nil {
		return
	}
	sum := f.Summary
	// The table against the summary: the rows by status and by payment are what the counts say.
	var processed, pending, processing, paid, failed, payPending int
	for _, r := range f.Rows {
		switch r.Status {
		case engine.StatusProcessed:
			processed++
		case engine.StatusPending:
			pending++
		case engine.StatusProcessing:
			processing++
		}
		switch r.PaymentStatus {
		case "Paid":
			paid++
		case "Failed":
			failed++
		case "Pending":
			payPending++
		}
	}
	if o := sum.Outbox; o.Processed != processed || o.Pending != pending || o.Processing != processing {
		s.violate(kindFigure, path, "any", fmt.Sprintf("outbox counts %d/%d/%d, the table %d/%d/%d (Processed/Pending/Processing)",
			o.Processed, o.Pending, o.Processing, processed, pending, processing), "")
	}
	if p := sum.Payments; p.Paid != paid || p.Failed != failed || p.Pending != payPending {
		s.violate(kindFigure, path, "any", fmt.Sprintf("payments Paid %d Failed %d Pending %d, the table %d/%d/%d", p.Paid, p.Failed, p.Pending, paid, failed, payPending), "")
	}
	attempts, twice := 0, 0
	for _, as := range f.Attempts {
		attempts += len(as)
		if len(as) > 1 {
			twice++
		}
	}
	if attempts != sum.ProcessingAttempts || twice != sum.ProcessedMoreThanOnce {
		s.violate(kindFigure, path, "any", fmt.Sprintf("processing attempts %d (%d keys more than once), the ledger of attempts %d (%d)",
			sum.ProcessingAttempts, sum.ProcessedMoreThanOnce, attempts, twice), "")
	}
	s.checkChecks(l, path)
	s.checkVerdict(l, path)
	if m.ask.Open != nil && f.Done {
		s.violate(kindQuestion, path, "any", "a question is open about a run that is over: "+m.ask.Open.Text, "")
	}
	if s.answered {
		s.answered = false
		s.checkAnswer(l, path)
	}
}

// checkAnswer holds the lab's words about the answer just given against the engine's reading of
// what the step did (engine.Observed, the answer the events imply): "✓ right" exactly when the
// answer picked is the one the run made right, naming it; until the run has done what the
// question asks about (a question about the end), that it waits.
func (s *searcher) checkAnswer(l *lab, path []string) {
	asked := l.m.ask.AskedSoFar(l.m.track.Line)
	if len(asked) == 0 {
		return // skipped, or its step stepped back past
	}
	a := asked[len(asked)-1]
	o, note := a.Observed, l.m.status.Text
	q := a.Question
	bad := ""
	switch {
	case !o.Known:
		if !strings.Contains(note, "graded "+o.Waiting) {
			bad = "the answer waits for the run, and the lab does not say so"
		}
	case o.Right < 0:
		if strings.Contains(note, "✓ right") || strings.Contains(note, "✗ not quite") {
			bad = "no answer describes what happened, yet the lab grades it"
		}
	case a.Picked == o.Right && !strings.Contains(note, "✓ right: "+q.Answers[o.Right]):
		bad = "the answer the run made right was picked, and the lab does not say right"
	case a.Picked != o.Right && !strings.Contains(note, "it is "+q.Answers[o.Right]):
		bad = "the lab does not name the answer the run made right"
	}
	if bad != "" {
		s.violate(kindQuestion, path, "any", fmt.Sprintf("%q (picked %q; the run: %s): %s — the status says %q",
			q.Text, q.Answers[a.Picked], o.Words, bad, note), "")
	}
}

// figure is the first number in s after prefix, or -1.
func figure(s, prefix string) int {
	i := strings.Index(s, prefix)
	if i < 0 {
		return -1
	}
	rest := strings.TrimLeft(s[i+len(prefix):], " ")
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(rest[:j])
	if err != nil {
		return -1
	}
	return n
}

// checkChecks holds each check's mark against the figures its detail quotes, and those figures
// against the frame.
func (s *searcher) checkChecks(l *lab, path []string) {
	f := l.m.frame
	sum := f.Summary
	for _, c := range sum.Checks {
		bad := ""
		switch c.ID {
		case engine.CheckNoViolations:
			if n := figure(c.Detail, ""); (n == 0) != c.OK || n != sum.OwnershipViolations {
				bad = "its figure and its mark disagree"
			}
		case engine.CheckWrittenOnce:
			if n := figure(c.Detail, ""); (n == 0) != c.OK || n != sum.FinalizedMoreThanOnce {
				bad = "its figure and its mark disagree"
			}
		case engine.CheckOneOwner:
			if n := figure(c.Detail, ""); (n == 0) != c.OK || n != sum.ProcessedByTwoOwners {
				bad = "its figure and its mark disagree"
			}
		case engine.CheckRecovered:
			if why := recoveryAgainstTable(f); why != "" {
				s.violate(kindCheckWords, path, "any", fmt.Sprintf("%q — %s: %s", c.Name, c.Detail, why), "")
			}
		}
		if c.ID == "none-lost" || strings.Contains(c.Detail, "outbox Processed/Pending/Processing") {
			want := fmt.Sprintf("%d/%d/%d", sum.Outbox.Processed, sum.Outbox.Pending, sum.Outbox.Processing)
			if strings.Contains(c.Detail, "Processed/Pending/Processing") && !strings.Contains(c.Detail, want) {
				bad = "its counts are not the table's " + want
			}
		}
		if bad != "" {
			s.violate(kindCheck, path, "any", fmt.Sprintf("%q — %s: %s", c.Name, c.Detail, bad), "")
		}
	}
}

// recoveryAgainstTable finds a crashed owner's message the check says nobody reclaimed, or
// processed fewer times than the ledger of attempts shows after the crash; "" when none.
func recoveryAgainstTable(f *common.Frame) string {
	for _, r := range f.Summary.Recovery {
		at, err := time.Parse("15:04:05.000Z", r.CrashedAt)
		after := 0
		for _, a := range f.Attempts[r.Key] {
			if err == nil && clockOf(a.At).After(at) {
				after++
			}
		}
		if err != nil {
			continue
		}
		switch {
		case r.ReclaimedBy == "" && after > 0:
			return fmt.Sprintf("%s: reclaimed by nobody, yet processed %d× after the crash", r.Key, after)
		case r.ProcessedTimes < after:
			return fmt.Sprintf("%s: processed %d×, yet %d attempts after the crash", r.Key, r.ProcessedTimes, after)
		}
	}
	return ""
}

// clockOf is t's time of day, as the reports write CrashedAt.
func clockOf(t time.Time) time.Time {
	c, _ := time.Parse("15:04:05.000Z", t.UTC().Format("15:04:05.000Z"))
	return c
}

// checkVerdict holds the verdict against the checks that decide it.
func (s *searcher) checkVerdict(l *lab, path []string) {
	sum := l.m.frame.Summary
	for _, c := range sum.Checks {
		if c.Decides && !c.OK && sum.Passed && l.m.frame.Done {
			s.violate(kindVerdict, path, "any", fmt.Sprintf("VERDICT PASS while the deciding check %q fails", c.Name), "")
		}
	}
}

// checkScreen checks one screen of w×h cells.
func (s *searcher) checkScreen(l *lab, path []string, v string, sz [2]int) {
	m, f := l.m, l.m.frame
	size := fmt.Sprintf("%dx%d", sz[0], sz[1])
	plain := ansi.Strip(v)
	lines := strings.Split(plain, "\n")
	if len(lines) > sz[1] {
		s.violate(kindCut, path, size, fmt.Sprintf("%d lines in a window of %d", len(lines), sz[1]), plain)
	}
	if loc := internalText.FindString(plain); loc != "" {
		kind := kindInternal
		if f != nil && slices.ContainsFunc(f.Events, func(e engine.Event) bool { return strings.Contains(e.String(), loc) }) {
			kind = kindEventText
		}
		s.violate(kind, path, size, fmt.Sprintf("%q on screen", loc), plain)
	}
	if m.layout.tooSmall || m.sql.Open || m.diagram.On {
		return
	}
	flat := flatten(plain)
	// The status line whole: a question and its answers, an answer and its why, any note.
	if st := m.statusLine().Shown().Plain(); st != "" && !strings.Contains(flat, flatten(st)) {
		s.violate(kindCut, path, size, fmt.Sprintf("the status note is not on screen whole: %q", st), plain)
	}
	if q := m.ask.Open; q != nil {
		if !strings.Contains(flat, flatten(q.Text)) {
			s.violate(kindCut, path, size, "the open question is not on screen whole: "+q.Text, plain)
		}
		letters := m.ask.Keys.Letters()
		for i, a := range q.Answers {
			if !strings.Contains(flat, flatten(letters[i]+" "+a)) {
				s.violate(kindCut, path, size, fmt.Sprintf("answer %s %q of the open question is not on screen", letters[i], a), plain)
			}
		}
	}
	if m.showHelp {
		for _, hl := range m.help().fullHelpLines(sz[0]) {
			if !strings.Contains(flat, flatten(ansi.Strip(hl))) {
				s.violate(kindCut, path, size, fmt.Sprintf("the ? screen lacks its line %q", strings.TrimSpace(ansi.Strip(hl))), plain)
				break
			}
		}
		return // the ? screen covers the panes
	}
	if f == nil || f.Summary == nil {
		return
	}
	s.checkVerdictScreen(l, path, size, plain, flat)
	s.checkLeftOut(l, path, size, plain, lines)
	s.checkMarks(l, path, size, plain, lines)
}

// flatten is text without its spaces, so that a sentence wrapped over lines still matches.
func flatten(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\u00a0' {
			return -1
		}
		return r
	}, s)
}

// checkVerdictScreen: the verdict's banner, its mark, the expectations and the status line
// say one thing.
func (s *searcher) checkVerdictScreen(l *lab, path []string, size, plain, flat string) {
	f := l.m.frame
	sum := f.Summary
	pass, fail := strings.Contains(plain, "VERDICT: PASS"), strings.Contains(plain, "VERDICT: FAIL")
	if !f.Done {
		return
	}
	if pass == fail || pass != sum.Passed {
		s.violate(kindVerdict, path, size, fmt.Sprintf("the screen shows PASS %v, FAIL %v; the run passed %v", pass, fail, sum.Passed), plain)
	}
	if mark := verdictMark(sum.Verdict); mark != "" && !strings.Contains(plain, mark) {
		s.violate(kindCut, path, size, "the verdict's mark "+mark+" is not on screen", plain)
	}
	if (pass && strings.Contains(plain, "❌")) || (fail && strings.Contains(plain, "✅")) {
		s.violate(kindVerdict, path, size, "a verdict with the other verdict's mark", plain)
	}
	if pass && strings.Contains(plain, "not as expected") {
		s.violate(kindVerdictWords, path, size, "VERDICT: PASS beside \"not as expected\"", plain)
	}
	if !strings.Contains(flat, flatten(sum.Verdict)) {
		s.violate(kindCut, path, size, "the verdict's words are not on screen whole: "+sum.Verdict, plain)
	}
}

// verdictMark is the mark a verdict's words end with, "" when none.
func verdictMark(v string) string {
	for _, m := range []string{"✅", "❌"} {
		if strings.HasSuffix(strings.TrimSpace(v), m) {
			return m
		}
	}
	return ""
}

var (
	workerLine = regexp.MustCompile(`^[▸ ][• !]\s?\d+ (Worker-\S+|\S+) `)
	moreLine   = regexp.MustCompile(`\+(\d+) more`)
)

// checkLeftOut: where workers or rows are left out, the screen says how many.
func (s *searcher) checkLeftOut(l *lab, path []string, size, plain string, lines []string) {
	f := l.m.frame
	names := map[string]bool{}
	for _, w := range f.Workers {
		names[w.Name] = true
	}
	shown := map[string]bool{}
	for _, ln := range lines {
		if mm := workerLine.FindStringSubmatch(ln); mm != nil && names[mm[1]] {
			shown[mm[1]] = true
		}
	}
	if missing := len(f.Workers) - len(shown); missing > 0 && !hasMore(plain, missing) {
		s.violate(kindCut, path, size, fmt.Sprintf("%d of %d workers on screen, and no \"+%d more\"", len(shown), len(f.Workers), missing), plain)
	}
	var left []string // the ledgers' column, and what is above and below it
	for _, ln := range lines {
		left = append(left, ansi.Cut(ln, 0, l.m.layout.ledgersW))
	}
	column := strings.Join(left, "\n")
	missing := 0
	for _, it := range (ledgers.Pane{Scene: l.m.scene()}).Items() {
		words := strings.Fields(ledgerLabel(it))
		for i, w := range words {
			words[i] = regexp.QuoteMeta(w)
		}
		if !regexp.MustCompile(strings.Join(words, `\s+`) + `\s+\d`).MatchString(column) {
			missing++ // its words and its figure: "reclaims 0", not "B reclaims it"
		}
	}
	if missing > 0 && !hasMore(plain, missing) {
		s.violate(kindCut, path, size, fmt.Sprintf("%d ledger items left out, and no \"+%d more\"", missing, missing), plain)
	}
	rows := 0
	for _, r := range f.Rows {
		if strings.Contains(plain, " "+r.IdempotencyKey+" ") {
			rows++
		}
	}
	if missing := len(f.Rows) - rows; missing > 0 && !hasMore(plain, missing) &&
		!strings.Contains(plain, fmt.Sprintf("of %d", len(f.Rows))) {
		s.violate(kindCut, path, size, fmt.Sprintf("%d of %d rows on screen, and no word of the others", rows, len(f.Rows)), plain)
	}
}

// ledgerLabel is a ledger item's words before its first figure: "processing attempts".
func ledgerLabel(item string) string {
	item = strings.TrimPrefix(ansi.Strip(item), "!! ")
	if i := strings.IndexAny(item, "0123456789"); i > 0 {
		item = item[:i]
	}
	return strings.TrimSpace(item)
}

// hasMore reports whether the screen says "+n more".
func hasMore(plain string, n int) bool {
	for _, mm := range moreLine.FindAllStringSubmatch(plain, -1) {
		if mm[1] == strconv.Itoa(n) {
			return true
		}
	}
	return false
}

// checkMarks: each check's line on screen carries the mark of its state.
func (s *searcher) checkMarks(l *lab, path []string, size, plain string, lines []string) {
	for _, c := range checks.Classify(l.m.frame) {
		for _, name := range []string{c.Name, c.Short} {
			if name == "" {
				continue
			}
			for _, ln := range lines {
				i := strings.Index(ln, name)
				if i < 0 {
					continue
				}
				head := strings.TrimSpace(ln[:i])
				if fields := strings.Fields(head); len(fields) > 0 {
					head = fields[len(fields)-1]
				}
				want := map[checks.State][]string{checks.Holds: {"✓", "ok"}, checks.Fails: {"✗", "FAIL"}, checks.Open: {"…", "open"}, checks.Aside: {"○", "aside"}}[c.State]
				okMark := false
				for _, w := range want {
					okMark = okMark || strings.Contains(head, w)
				}
				if !okMark && head != "" && strings.ContainsAny(head, "✓✗…○") {
					s.violate(kindCheck, path, size, fmt.Sprintf("%q shown with %q, its state wants %v", name, head, want), plain)
				}
			}
		}
	}
}
