package engine

import (
	"fmt"
	"sync"
	"time"
)

// A provider that fails (issue 20): a call may fail instead of answering, scripted per message
// and per attempt (Fault), for everyone during an outage (Outage), or at random at a seeded rate
// (Scenario.FailRate). A failed call has no answer: the worker records the error on the row and
// releases its lease (Conn.Fail). A transient failure may succeed on a later attempt; a
// permanent one never will, and with dead letters on it is parked at once.

// Fault is a scripted failure of the provider for one message.
type Fault struct {
	Key string
	// Times is how many of its first calls fail; 0: every call (always).
	Times int
	// Permanent: the provider refuses the message for good (a permanent error), rather than
	// timing out.
	Permanent bool
	Line      int // the scenario file's line, for messages
}

// Outage is a time during which every provider call fails (transient: it times out).
type Outage struct {
	From time.Time
	For  time.Duration
}

// ProviderError is why a provider call failed; "" when it answered.
type ProviderError struct {
	Text      string
	Permanent bool
}

// failurePlan decides, call by call, whether the provider fails. Safe for concurrent use.
type failurePlan struct {
	faults  map[string]Fault
	outages []Outage
	rate    float64
	draw    *jitter

	mu    sync.Mutex
	calls map[string]int // calls per key with a fault
}

func newFailurePlan(sc *Scenario, draw *jitter) *failurePlan {
	p := &failurePlan{outages: sc.Outages, rate: sc.FailRate, draw: draw}
	if len(sc.Faults) > 0 {
		p.faults, p.calls = map[string]Fault{}, map[string]int{}
		for _, f := range sc.Faults {
			p.faults[f.Key] = f
		}
	}
	return p
}

// active says whether any failure is configured.
func (p *failurePlan) active() bool {
	return len(p.faults) > 0 || len(p.outages) > 0 || p.rate > 0
}

// inOutage reports whether now falls in one of the plan's outages.
func (p *failurePlan) inOutage(now time.Time) bool {
	for _, o := range p.outages {
		if !now.Before(o.From) && now.Before(o.From.Add(o.For)) {
			return true
		}
	}
	return false
}

// call decides the outcome of a provider call for key at now.
func (p *failurePlan) call(key string, now time.Time) ProviderError {
	if f, ok := p.faults[key]; ok {
		p.mu.Lock()
		p.calls[key]++
		n := p.calls[key]
		p.mu.Unlock()
		if f.Times == 0 || n <= f.Times {
			if f.Permanent {
				return ProviderError{Text: "provider: permanent error (payment refused)", Permanent: true}
			}
			return ProviderError{Text: fmt.Sprintf("provider: timeout (attempt %d)", n)}
		}
	}
	if p.inOutage(now) {
		return ProviderError{Text: "provider: unavailable (outage)"}
	}
	if p.rate > 0 && p.draw.Float64() < p.rate {
		return ProviderError{Text: "provider: timeout (seeded)"}
	}
	return ProviderError{}
}

// callChart counts provider calls per 100 ms of scenario time, from the run's start.
type callChart struct {
	mu    sync.Mutex
	start time.Time
	calls []int
	fails []int
}

// ChartBucket is the width of a bar of the provider-call chart.
const ChartBucket = 100 * time.Millisecond

func (c *callChart) record(at time.Time, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := int(at.Sub(c.start) / ChartBucket)
	if i < 0 || i > 100_000 {
		return
	}
	for len(c.calls) <= i {
		c.calls, c.fails = append(c.calls, 0), append(c.fails, 0)
	}
	c.calls[i]++
	if failed {
		c.fails[i]++
	}
}

// CallBucket is one bar of the provider-call chart: the calls made in [From, From+100ms).
type CallBucket struct {
	From   string `json:"from"`
	Calls  int    `json:"calls"`
	Failed int    `json:"failed"`
}

func (c *callChart) buckets() []CallBucket {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]CallBucket, len(c.calls))
	for i := range c.calls {
		out[i] = CallBucket{From: FormatClock(c.start.Add(time.Duration(i) * ChartBucket)), Calls: c.calls[i], Failed: c.fails[i]}
	}
	return out
}
