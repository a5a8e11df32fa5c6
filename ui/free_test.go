package ui

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/ui/common"
)

// poll delivers the poll tick that is waiting, if any: one beat of the free run's loop.
func (l *lab) poll() bool {
	l.tb.Helper()
	if len(l.polls) == 0 {
		return false
	}
	p := l.polls[0]
	l.polls = l.polls[1:]
	l.send(p)
	return true
}

// pollUntil delivers poll ticks, a few milliseconds apart, until ok holds; it fails after 20 s.
// Between polls it presses what the status line asks for (f, +), as a learner would.
func (l *lab) pollUntil(what string, ok func() bool) {
	l.tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			l.tb.Fatalf("free run: never %s; screen:\n%s", what, l.view())
		}
		if !l.poll() {
			l.tb.Fatalf("free run: no poll tick waiting (the loop stopped) before %s; screen:\n%s", what, l.view())
		}
		switch st := l.m.status.Text; {
		case l.m.status.Level == common.LevelError:
			l.tb.Fatalf("error while free-running: %s", st)
		case strings.Contains(st, "press f"):
			l.press("f")
		case strings.Contains(st, "press +"):
			l.press("+")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// processed is the number of rows the last frame read as Processed.
func (l *lab) processed() int {
	n := 0
	for _, r := range l.m.frame.Rows {
		if r.Status == engine.StatusProcessed {
			n++
		}
	}
	return n
}

// serving reports whether any goroutine is inside a worker's Serve loop: after a stop there
// must be none.
func serving() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Contains(buf[:n], []byte("(*Worker).Serve"))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// stopped fails unless the free run is over: the screen steps again and no worker goroutine is
// left.
func (l *lab) stopped() {
	l.tb.Helper()
	if l.m.free.on || l.m.runner.running() {
		l.tb.Fatalf("free run still on: screen %v, runner %v", l.m.free.on, l.m.runner.running())
	}
	if serving() {
		l.tb.Fatal("a worker goroutine is still serving after the free run stopped")
	}
	l.mustNot("FREE-RUNNING")
}

func TestFreeStartsAndStops(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("g")
	if !l.m.runner.running() || !l.m.free.on {
		t.Fatal("g did not start the free run")
	}
	// Six messages, two workers: 5 s between actions makes the run last about a minute.
	l.must("FREE-RUNNING", "pace 5s (< >, g stops)", "processed 0/6", "every worker on its own goroutine",
		"g stop free run")
	if len(l.polls) != 1 {
		t.Fatalf("%d poll ticks waiting after g, want 1", len(l.polls))
	}
	// The step keys are off: nothing steps the workers but themselves.
	if l.m.keys.Step.Enabled() || l.m.workers.Keys().Step.Enabled() || l.m.keys.Play.Enabled() {
		t.Fatal("step keys on while free-running")
	}
	l.press("n", "s", "p")
	if l.m.track.Acted() != 0 || l.m.play.Playing {
		t.Fatalf("a step key acted while free-running: steps %d, playing %v", l.m.track.Acted(), l.m.play.Playing)
	}
	l.press(">", ">", ">", ">", ">", ">", ">", ">")
	l.must("full speed")
	l.pollUntil("processed all 6", func() bool { return l.processed() == 6 })
	l.pollUntil("said all are processed", func() bool { return strings.Contains(l.m.status.Text, "all 6 messages Processed") })
	if l.m.free.polls < freeStillPolls {
		t.Fatalf("%d poll results taken, want at least %d", l.m.free.polls, freeStillPolls)
	}
	l.must("processed 6/6")

	l.press("g")
	l.stopped()
	l.must("stopped: every worker finished the action in flight", "‖ paused")
	if !l.m.keys.Step.Enabled() {
		t.Fatal("step keys still off after the free run stopped")
	}
	// The loop's last tick is stale now: delivering it reads nothing.
	polls := l.m.free.polls
	for l.poll() {
	}
	if l.m.free.polls != polls || l.m.busy {
		t.Fatal("a poll tick of the stopped loop was taken")
	}
	// Stepping again. A worker whose last claim was blocked by a lease that has since been
	// finalized waits for the clock (its next claim, empty, then ends it): + first. Moving the
	// clock wakes every idle worker for one more empty claim.
	l.press("+")
	for i := 0; i < 10 && !l.m.frame.Done; i++ {
		l.press("n")
	}
	l.press("n")
	l.must("the scenario is done (PASS)")
}

func TestFreeNeverRunsTwoPollLoops(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("g", "g", "g")
	if len(l.polls) != 2 {
		t.Fatalf("%d poll ticks, want 2 (one per start)", len(l.polls))
	}
	l.poll() // the first loop's tick: stale
	if l.m.free.polls != 0 {
		t.Fatal("a stale poll tick was taken")
	}
	l.poll()
	if l.m.free.polls != 1 || len(l.polls) != 1 {
		t.Fatalf("after one live tick: %d polls taken, %d ticks waiting; want 1 and 1", l.m.free.polls, len(l.polls))
	}
}

// Crash, restart and pause keep working while the workers run, and the screen keeps polling.
func TestFreeCrashRestartPauseWhileRunning(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("g", ">", ">") // a second between actions: slow enough to crash a worker holding a lease
	l.must("pace 1s")
	l.pollUntil("saw Worker-A claim", func() bool { return strings.Contains(l.view(), "Worker-A claimed PAY-") })
	l.press("1", "x")
	l.must("Worker-A CRASHED")
	polls := l.m.free.polls
	l.pollUntil("polled after the crash", func() bool { return l.m.free.polls > polls })
	if !l.m.frame.Workers[0].Crashed {
		t.Fatal("the poll after the crash does not show Worker-A crashed")
	}
	l.press("2", "z")
	l.must("Worker-B PAUSED")
	l.pollUntil("polled with B paused", func() bool { return l.m.free.polls > polls+1 })
	l.must("PAUSED")
	l.press("1", "r")
	l.must("Worker-A restarted")
	l.press("2", "z")
	l.must("Worker-B woke up")
	l.press(">", ">", ">", ">", ">", ">")
	l.must("full speed")
	l.pollUntil("processed all 6", func() bool { return l.processed() == 6 })
	l.press("g")
	l.stopped()
	sum, err := l.m.sess.Summarize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.FinalizedMoreThanOnce != 0 || sum.Lost != 0 {
		t.Fatalf("finalized more than once %d, lost %d", sum.FinalizedMoreThanOnce, sum.Lost)
	}
}

func TestFreeResetTabAndQuitStopTheWorkers(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("g")
	l.pollUntil("saw a claim", func() bool { return strings.Contains(l.view(), "claimed PAY-") })
	l.press("R")
	l.stopped()
	l.must("opened playground", "step 0")
	for i := 1; i <= 6; i++ {
		if row := l.row(engine.MessageKey(i)); !strings.Contains(row, "Pending") {
			t.Fatalf("after R, row %d is not Pending: %q", i, row)
		}
	}
	l.press("n")
	l.must("Worker-A claimed PAY-001") // stepping works on the fresh database

	l.press("g")
	l.pollUntil("polled", func() bool { return l.m.free.polls > 0 })
	l.press("tab")
	l.stopped()
	l.must("BEFORE: two workers share a durable outbox")

	l.press("g")
	if !l.m.runner.running() {
		t.Fatal("g did not start the free run on the second scenario")
	}
	l.press("q")
	if !l.quit || l.m.runner.running() || serving() {
		t.Fatalf("q while free-running: quit %v, runner %v, serving %v", l.quit, l.m.runner.running(), serving())
	}
}

// TestFreeRunWithCrashes runs the workers free with crashes, restarts, pauses and clock moves
// for a while (go test -race ./ui/ is where it earns its keep): no panic, a poll result after
// every crash, and afterwards a consistent database: every row Processed, no outcome written
// twice.
func TestFreeRunWithCrashes(t *testing.T) {
	run := 1500 * time.Millisecond
	switch {
	case testing.Short():
		run = 300 * time.Millisecond
	case raceEnabled:
		run = 4 * time.Second // every read of the database is many times slower
	}
	l := newLab(t, "playground", 120, 40, engine.Overrides{Messages: 200, Workers: 4})
	// 200 messages and 4 workers start at 200 ms between actions (a minute's run); > > is 10 ms:
	// the crashes land in the middle of the work.
	l.press("g", ">", ">")
	l.must("pace 10ms")
	end := time.Now().Add(run)
	crashes := 0
	for i := 0; time.Now().Before(end) && l.processed() < 200; i++ {
		w := i % 4
		l.press(string(rune('1'+w)), "x")
		crashes++
		polls := l.m.free.polls
		l.pollUntil("polled after a crash", func() bool { return l.m.free.polls > polls })
		if !l.m.frame.Workers[w].Crashed {
			t.Fatalf("the poll after crashing worker %d does not show it crashed", w+1)
		}
		l.press(string(rune('1'+(w+1)%4)), "z", "+", "f")
		l.poll()
		l.press("r", "z") // wakes the paused one; r on a live worker is refused
		l.press(string(rune('1'+w)), "r")
		if l.m.status.Level == common.LevelError {
			t.Fatalf("error after %d crashes: %s", crashes, l.m.status.Text)
		}
	}
	t.Logf("%d of %d processed when the crashes ended", l.processed(), len(l.m.frame.Rows))
	for i := 1; i <= 4; i++ { // leave no worker crashed or paused
		l.press(string(rune('0' + i)))
		if v := l.m.frame.Workers[i-1]; v.Crashed {
			l.press("r")
		} else if v.Paused {
			l.press("z")
		}
	}
	l.press(">", ">") // full speed to the end
	l.pollUntil("processed all 200", func() bool { return l.processed() == 200 })
	l.press("g")
	l.stopped()
	sum, err := l.m.sess.Summarize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.FinalizedMoreThanOnce != 0 || sum.Outbox.Processed != 200 || sum.OwnershipViolations != 0 {
		t.Fatalf("after %d crashes: finalized more than once %d, processed %d of 200, violations %d",
			crashes, sum.FinalizedMoreThanOnce, sum.Outbox.Processed, sum.OwnershipViolations)
	}
	t.Logf("%d crashes, %d polls, %d processing attempts, %d reclaims", crashes, l.m.free.polls, sum.ProcessingAttempts, sum.Reclaims)
}

// A free run in a lesson with a script ends the script: once the workers have done every
// message the verdict shows, and once they are stopped, space steps them in turn and never
// asks the lesson's prediction about a run that is over (issue 28: many-workers asked its
// pre-run question after a free run had done all 500 messages).
func TestFreeRunEndsWithAVerdict(t *testing.T) {
	for _, name := range []string{"before", "many-workers"} {
		l := newLab(t, name, 120, 40, engine.Overrides{})
		l.press("g")
		l.press(">", ">", ">", ">", ">", ">", ">", ">")
		l.pollUntil("ended with a verdict", func() bool { return l.m.frame.Done })
		l.must("VERDICT: ", "expectations not judged: the run left the script (a free run)")
		l.mustNot("not as expected", "as expected with")
		l.press("g")
		l.stopped()
		for i := 0; i < 3; i++ {
			l.press(" ")
			if l.m.ask.Open != nil || strings.Contains(l.view(), "PREDICT") {
				t.Fatalf("%s: space asked a question after the free run:\n%s", name, l.view())
			}
		}
		l.must("VERDICT: ")
	}
}
