package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"leaselab/engine"
)

// ledgerProvider is a provider over HTTP for the tests: it keeps every call, answers Paid with a
// transaction id of its own (the call's number), and answers the first call of each key in
// refuse with 503.
type ledgerProvider struct {
	mu     sync.Mutex
	calls  []providerCall
	refuse map[string]bool
}

func (p *ledgerProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var c providerCall
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil || r.Method != http.MethodPost {
		http.Error(w, "bad call", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.calls = append(p.calls, c)
	n, refused := len(p.calls), p.refuse[c.Key]
	delete(p.refuse, c.Key)
	p.mu.Unlock()
	if refused {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	json.NewEncoder(w).Encode(providerAnswer{Status: engine.PaymentPaid, TransactionID: fmt.Sprintf("call-%d", n)})
}

// A hosted worker with --provider calls it once per claim, with its key, its LockedBy and the
// claim's lease version, and the finalize writes the provider's own transaction id; a call the
// provider refuses (503) gives the message back, and its next claim (v2) calls again.
func TestHostedWorkerCallsItsProvider(t *testing.T) {
	const messages = 12
	onEachBackend(t, messages, []string{"--slots", "3", "--lease", "5s", "--poll", "5ms"}, func(t *testing.T, name, db string, common []string) {
		p := &ledgerProvider{refuse: map[string]bool{"PAY-002": true}}
		srv := httptest.NewServer(p)
		defer srv.Close()
		w := start(t, append(common, "--name", "P1", "--provider", srv.URL)...)
		w.finish(t, 60*time.Second)
		out := w.output()
		if !strings.Contains(out, "provider "+srv.URL) {
			t.Errorf("the first line does not name the provider:\n%s", firstLine(out))
		}
		if !regexp.MustCompile(`released PAY-002 unprocessed \(the call failed: provider answered 503`).MatchString(out) {
			t.Errorf("no release of PAY-002 after the provider's 503:\n%s", out)
		}
		p.mu.Lock()
		calls := append([]providerCall(nil), p.calls...)
		p.mu.Unlock()
		if len(calls) != messages+1 {
			t.Fatalf("%d calls, want %d (one per message, PAY-002 twice): %+v", len(calls), messages+1, calls)
		}
		last := map[string]int{} // key → number of its last call
		for i, c := range calls {
			want := int64(1)
			if c.Key == "PAY-002" && last[c.Key] > 0 {
				want = 2
			}
			if c.Worker != "Worker-P1" || c.LeaseVersion != want {
				t.Errorf("call %d: %+v, want worker Worker-P1, lease version %d", i+1, c, want)
			}
			last[c.Key] = i + 1
		}
		be, err := openShared(context.Background(), backends(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		rows, err := be.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if want := fmt.Sprintf("call-%d", last[r.IdempotencyKey]); r.Status != engine.StatusProcessed || r.TransactionID != want {
				t.Errorf("%s: %s, transaction %q; want Processed with the provider's %q", r.IdempotencyKey, r.Status, r.TransactionID, want)
			}
		}
	})
}

// A hosted worker with --skew writes its leases by its own clock: +30m puts every lease end half
// an hour past the real one.
func TestHostedWorkerSkew(t *testing.T) {
	onEachBackend(t, 4, []string{"--slots", "2", "--lease", "2s", "--poll", "5ms"}, func(t *testing.T, name, db string, common []string) {
		before := time.Now()
		w := start(t, append(common, "--name", "S1", "--skew", "+30m")...)
		w.finish(t, 60*time.Second)
		m := regexp.MustCompile(`claimed PAY-\d+, lease until (\d\d:\d\d:\d\d\.\d\d\d)`).FindStringSubmatch(w.output())
		if m == nil {
			t.Fatalf("no claim line:\n%s", w.output())
		}
		at, err := time.Parse("15:04:05.000", m[1])
		if err != nil {
			t.Fatal(err)
		}
		// Clock times only: compare them modulo a day.
		got := at.Sub(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC))
		want := before.Add(30*time.Minute + 2*time.Second).Local()
		wantTOD := time.Duration(want.Hour())*time.Hour + time.Duration(want.Minute())*time.Minute + time.Duration(want.Second())*time.Second
		if d := (got - wantTOD + 36*time.Hour) % (24 * time.Hour); d > 12*time.Hour+30*time.Second || d < 12*time.Hour-5*time.Second {
			t.Errorf("lease until %s; want about %s (the real time + 30m + the 2s lease)", m[1], want.Format("15:04:05"))
		}
	})
}

// --provider is a hosted worker's, and takes an http(s) URL; --skew takes an offset of an hour
// at most: anything else is refused with exit 2 and nothing run.
func TestWorkerProviderAndSkewRefused(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--provider http://127.0.0.1:1/", "only a hosted worker (--slots)"},
		{"--slots 2 --provider ftp://x/", "want an http:// or https:// URL"},
		{"--slots 2 --provider http://", "want an http:// or https:// URL"},
		{"--skew soon", "flag -skew: bad skew"},
		{"--skew +2h", "out of range"},
	} {
		code, _, errs := cli(t, append([]string{"worker", "--db", "nowhere.db", "--name", "A"}, strings.Fields(tc.args)...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("worker %s: exit %d, %q; want exit 2 saying %q", tc.args, code, errs, tc.want)
		}
	}
}

// The provider's answer is taken only when the finalize can write it.
func TestCheckProviderAnswer(t *testing.T) {
	for _, tc := range []struct {
		a  providerAnswer
		ok bool
	}{
		{providerAnswer{Status: "Paid", TransactionID: "txn-1"}, true},
		{providerAnswer{Status: "Failed"}, true},
		{providerAnswer{Status: "Failed", TransactionID: "txn-1"}, false},
		{providerAnswer{Status: "Paid"}, false},
		{providerAnswer{Status: "paid", TransactionID: "txn-1"}, false},
		{providerAnswer{Status: "Paid", TransactionID: "txn\x1b[2J"}, false},
		{providerAnswer{Status: "Paid", TransactionID: strings.Repeat("x", maxTransactionID+1)}, false},
	} {
		if _, err := checkAnswer(tc.a); (err == nil) != tc.ok {
			t.Errorf("%+v: error %v, want ok=%v", tc.a, err, tc.ok)
		}
	}
}
