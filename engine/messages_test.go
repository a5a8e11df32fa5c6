package engine

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// feed records n messages' worth of what a run records: each message claimed (lease v1),
// renewed, processed and finalized by one of four workers; every crashEvery-th (none when 0)
// also crashes its owner, is reclaimed (v2) and processed again. The provider and the gateway
// count their calls too.
func feed(l *Ledger, p *Provider, g *Gateway, from, to, crashEvery int) {
	workers := []string{"Worker-A", "Worker-B", "Worker-C", "Worker-D"}
	at := Epoch.Add(time.Duration(from) * time.Millisecond)
	for i := from; i <= to; i++ {
		key := MessageKey(i)
		w := workers[i%len(workers)]
		g.mu.Lock()
		*g.calls.At(key)++
		g.mu.Unlock()
		at = at.Add(time.Millisecond)
		l.record(Event{Kind: EvClaim, Outcome: OutcomeWon, Worker: w, Key: key, At: at, Until: at.Add(500 * time.Millisecond), Version: 1})
		l.attempt(key, Attempt{Worker: w, At: at, Version: 1})
		p.CheckPaymentStatus(key)
		l.record(Event{Kind: EvRenew, Outcome: OutcomeRenewed, Worker: w, Key: key, At: at, Until: at.Add(600 * time.Millisecond), Version: 1})
		if crashEvery > 0 && i%crashEvery == 0 {
			l.record(Event{Kind: EvCrash, Worker: w, Key: key, At: at})
			l.record(Event{Kind: EvRestart, Worker: w, At: at})
			other := workers[(i+1)%len(workers)]
			later := at.Add(time.Second)
			l.record(Event{Kind: EvClaim, Outcome: OutcomeReclaimed, Worker: other, Key: key, At: later, Until: later.Add(500 * time.Millisecond), Version: 2})
			l.attempt(key, Attempt{Worker: other, At: later, Version: 2})
			p.CheckPaymentStatus(key)
		}
		l.commit(key)
		l.record(Event{Kind: EvFinalize, Outcome: OutcomeCommitted, Worker: w, Key: key, At: at, Version: 1})
	}
}

// What the ledger, the provider and the gateway keep per message is small and does not depend
// on how many events a message had: 40 bytes for a message leased and processed once, a few
// hundred more for one crashed, reclaimed and processed again.
func TestMemoryPerMessageIsSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("measures 200,000 messages")
	}
	const n = 200_000
	for _, c := range []struct {
		crashEvery int
		bound      float64
	}{{0, 48}, {10, 140}} {
		// The event log keeps a bounded number of events whatever the run's length (eventlog.go):
		// without it, what is left is what the messages cost.
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		l, p, g := newLedger(n), newProvider(nil, n), newGateway(nil, n)
		feed(l, p, g, 1, n, c.crashEvery)
		l.log = eventLog{}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		per := (float64(m1.HeapAlloc) - float64(m0.HeapAlloc)) / n
		t.Logf("%.1f bytes per message (every %d-th reclaimed)", per, c.crashEvery)
		// The state is what the reports count from: nothing was lost to make it small.
		again := 0
		if c.crashEvery > 0 {
			again = n / c.crashEvery
		}
		processed, twice, written := l.messageCounts()
		rep := l.repeats()
		_, total, recovered, _ := l.recoveries(MaxExamples)
		calls, _, called := p.CallCounts()
		if processed != n || twice != again || written != 0 || rep.AfterLostLease != again || rep.TwoOwners != 0 ||
			total != again || recovered != again || calls != n+again || called != again {
			t.Errorf("processed %d, again %d, written twice %d, repeats %d/%d, crashes %d (%d recovered), calls %d (%d keys twice)",
				processed, twice, written, rep.AfterLostLease, rep.TwoOwners, total, recovered, calls, called)
		}
		runtime.KeepAlive(l)
		runtime.KeepAlive(p)
		runtime.KeepAlive(g)
	}
}

// BenchmarkLedgerPerMessage reports what the ledger keeps per message and how fast it records
// one (about six events, two with a crash in ten).
func BenchmarkLedgerPerMessage(b *testing.B) {
	for _, crashEvery := range []int{0, 10} {
		b.Run(fmt.Sprintf("crash-every-%d", crashEvery), func(b *testing.B) {
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			l := newLedger(b.N)
			b.ResetTimer()
			feed(l, newProvider(nil, b.N), newGateway(nil, b.N), 1, b.N, crashEvery)
			b.StopTimer()
			l.log = eventLog{} // bounded whatever the run's length: not a per-message cost
			runtime.GC()
			runtime.ReadMemStats(&m1)
			b.ReportMetric((float64(m1.HeapAlloc)-float64(m0.HeapAlloc))/float64(b.N), "bytes/message")
			runtime.KeepAlive(l)
		})
	}
}

// The per-message state grows with the messages, not with their events: a message renewed a
// thousand times by its owner keeps one lease, inline.
func TestRenewalsKeepOneLease(t *testing.T) {
	l := newLedger(1)
	at := Epoch
	l.record(Event{Kind: EvClaim, Outcome: OutcomeWon, Worker: "Worker-A", Key: "PAY-001", At: at, Until: at.Add(time.Second), Version: 1})
	for i := 1; i <= 1000; i++ {
		l.record(Event{Kind: EvRenew, Outcome: OutcomeRenewed, Worker: "Worker-A", Key: "PAY-001", At: at, Until: at.Add(time.Duration(i+1) * time.Second), Version: 1})
	}
	r := l.msgs.recs.Get("PAY-001")
	if r.flags&recSpan == 0 || r.flags&recSpilled != 0 || l.msgs.at(r.spanUntil) != at.Add(1001*time.Second) {
		t.Fatalf("record %+v, want one inline lease until +1001s", r)
	}
	if got := l.msgs.leaseEnd("PAY-001", "Worker-A"); !got.Equal(at.Add(1001 * time.Second)) {
		t.Fatalf("lease end %s", got)
	}
}

// Issued knows exactly the ids CheckPaymentStatus made.
func TestIssuedIsWhatWasMade(t *testing.T) {
	p := newProvider(nil, 0)
	var made []string
	for _, key := range []string{"PAY-001", "PAY-001", "PAY-003", "ORDER_7", "PAY-002"} {
		if id := p.CheckPaymentStatus(key).TransactionID; id != "" {
			made = append(made, id)
		}
	}
	for _, id := range made {
		if !p.Issued(id) {
			t.Errorf("%s not issued", id)
		}
	}
	for _, id := range []string{"txn_PAY-001_3", "txn_PAY-001_0", "txn_PAY-001_01", "txn_PAY-003_1", "txn_PAY-004_1", "txn_ORDER_7_2", "PAY-001_1", "txn_PAY-001_+1", ""} {
		if p.Issued(id) {
			t.Errorf("%s issued", id)
		}
	}
	if len(made) != 4 || !p.Issued("txn_ORDER_7_1") {
		t.Errorf("made %v", made)
	}
}

// A time that is not a whole millisecond after the run's first (a wall clock's) moves the
// message to the spill, exactly: the lease end and the attempt's time come back as they went in.
func TestUnevenTimesSpillExactly(t *testing.T) {
	l := newLedger(2)
	at := Epoch
	l.record(Event{Kind: EvClaim, Outcome: OutcomeWon, Worker: "Worker-A", Key: "PAY-001", At: at, Until: at.Add(time.Second), Version: 1})
	odd := at.Add(1234567 * time.Nanosecond)
	l.record(Event{Kind: EvClaim, Outcome: OutcomeWon, Worker: "Worker-B", Key: "PAY-002", At: odd, Until: odd.Add(time.Second), Version: 1})
	l.attempt("PAY-002", Attempt{Worker: "Worker-B", At: odd, Version: 1})
	l.record(Event{Kind: EvRenew, Outcome: OutcomeRenewed, Worker: "Worker-A", Key: "PAY-001", At: at, Until: odd.Add(2 * time.Second), Version: 1})
	for key, want := range map[string]time.Time{"PAY-001": odd.Add(2 * time.Second), "PAY-002": odd.Add(time.Second)} {
		w := map[string]string{"PAY-001": "Worker-A", "PAY-002": "Worker-B"}[key]
		if got := l.msgs.leaseEnd(key, w); !got.Equal(want) {
			t.Errorf("%s: lease end %s, want %s", key, got, want)
		}
		if r := l.msgs.recs.Get(key); r.flags&recSpilled == 0 {
			t.Errorf("%s: not spilled: %+v", key, r)
		}
	}
	if as := l.Attempts()["PAY-002"]; len(as) != 1 || !as[0].At.Equal(odd) {
		t.Errorf("attempts %+v, want one at %s", as, odd)
	}
}

// A lease taken from a row a guarded rescue freed began after the rescue, whatever time its
// claim was stamped with: a free-running claimer may read the clock, lose the processor while
// the clock moves and the rescuer frees the row, and stamp its lease with a moment the old
// lease was still live. Judged by the stamp alone that is two owners at once; the rescue says
// otherwise. Without the rescue's record the same events are two owners.
func TestRescuedLeaseIsNotASecondOwner(t *testing.T) {
	for _, rescued := range []bool{false, true} {
		l := newLedger(1)
		key := MessageKey(1)
		at := Epoch
		l.record(Event{Kind: EvClaim, Outcome: OutcomeWon, Worker: "Worker-A", Key: key, At: at, Until: at.Add(50 * time.Millisecond), Version: 1})
		l.attempt(key, Attempt{Worker: "Worker-A", At: at, Version: 1})
		if rescued {
			l.freed(key, 1, at.Add(60*time.Millisecond)) // a guarded rescue: A's lease had ended at 50 ms
		}
		stale := at.Add(40 * time.Millisecond) // B read the clock before the rescue
		l.record(Event{Kind: EvClaim, Outcome: OutcomeWon, Worker: "Worker-B", Key: key, At: stale, Until: stale.Add(50 * time.Millisecond), Version: 2})
		l.attempt(key, Attempt{Worker: "Worker-B", At: stale, Version: 2})
		r := l.repeats()
		if want := map[bool]int{false: 1, true: 0}[rescued]; r.TwoOwners != want || r.AfterLostLease != 1-want {
			t.Errorf("rescued %v: two owners %d, after a lost lease %d; want %d two owners", rescued, r.TwoOwners, r.AfterLostLease, want)
		}
	}
}
