package scenario

import (
	"strconv"
	"strings"
	"time"

	"leaselab/engine"
)

// A provider that fails, and what a failed attempt does next (issue 20). The header keys:
//
//	provider-error: PAY-004 always         every call for PAY-004 times out
//	provider-error: PAY-002 times-out 2    its first 2 calls time out, the third answers
//	provider-error: PAY-005 permanent      the provider refuses it for good (parked at once with dead letters on)
//	outage: 09:00:00.100Z 300ms            every call in [09:00:00.100Z, +300ms) fails
//	fail-rate: 0.2                         each call fails (times out) with this chance, from the seed
//	backoff-policy: fixed | exponential    with backoff on (the toggle); exponential: full jitter
//	backoff-base: 100ms                    the fixed wait, or the exponential's first
//	backoff-cap: 2s                        the exponential's longest wait
//	max-attempts: 3                        with dead-letter on: attempts before the message is parked

// retryKeys are the keys retryHeader reads; provider-error and outage may repeat.
var retryKeys = []string{"provider-error", "outage", "fail-rate", "backoff-policy", "backoff-base", "backoff-cap", "max-attempts"}

// retryRepeatable says whether key may appear more than once.
func retryRepeatable(key string) bool { return key == "provider-error" || key == "outage" }

// retryHeader reads one of retryKeys; handled is false for any other key.
func (p *parser) retryHeader(n int, key, val string) (handled bool, err error) {
	sc := p.sc
	switch key {
	case "provider-error":
		return true, p.providerError(n, val)
	case "outage":
		f := strings.Fields(val)
		if len(f) != 2 {
			return true, p.errf(n, "bad outage %q: want a start time and a length, e.g. outage: 09:00:00.100Z 300ms", val)
		}
		t, err := time.Parse("15:04:05.000Z", f[0])
		if err != nil {
			return true, p.errf(n, "bad outage start %q: want a scenario time like 09:00:00.100Z", f[0])
		}
		d, err := p.duration(n, "outage", f[1])
		if err != nil {
			return true, err
		}
		if d == 0 {
			return true, p.errf(n, "bad outage length: want at least 1ms")
		}
		at := time.Date(engine.Epoch.Year(), engine.Epoch.Month(), engine.Epoch.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
		sc.Outages = append(sc.Outages, engine.Outage{From: at, For: d})
	case "fail-rate":
		r, err := strconv.ParseFloat(val, 64)
		if err != nil || !(r >= 0 && r <= 1) { // also refuses NaN
			return true, p.errf(n, "bad fail-rate %q: want a chance from 0 to 1, e.g. 0.2", val)
		}
		sc.FailRate = r
	case "backoff-policy":
		if val != engine.BackoffFixed && val != engine.BackoffExponential {
			return true, p.errf(n, "bad backoff-policy %q: want fixed or exponential (no backoff is \"backoff: off\")", val)
		}
		sc.Settings.BackoffPolicy = val
	case "backoff-base", "backoff-cap":
		d, err := p.duration(n, key, val)
		if err != nil {
			return true, err
		}
		if d == 0 {
			return true, p.errf(n, "bad duration for %s: want at least 1ms", key)
		}
		if key == "backoff-base" {
			sc.Settings.BackoffBase = d
		} else {
			sc.Settings.BackoffCap = d
		}
	case "max-attempts":
		v, err := strconv.Atoi(val)
		if err != nil || v < 1 || v > 1000 {
			return true, p.errf(n, "bad max-attempts %q: want a whole number from 1 to 1000", val)
		}
		sc.Settings.MaxAttempts = v
	default:
		return false, nil
	}
	return true, nil
}

// providerError reads "KEY always", "KEY times-out N" or "KEY permanent".
func (p *parser) providerError(n int, val string) error {
	f := strings.Fields(val)
	bad := func() error {
		return p.errf(n, "bad provider-error %q: want KEY always, KEY times-out N or KEY permanent, e.g. provider-error: PAY-002 times-out 2", val)
	}
	if len(f) < 2 {
		return bad()
	}
	fault := engine.Fault{Key: f[0], Line: n}
	switch {
	case f[1] == "always" && len(f) == 2:
	case f[1] == "permanent" && len(f) == 2:
		fault.Permanent = true
	case f[1] == "times-out" && len(f) == 3:
		t, err := strconv.Atoi(f[2])
		if err != nil || t < 1 || t > 1000 {
			return p.errf(n, "bad provider-error %q: times-out wants a whole number of calls from 1 to 1000", val)
		}
		fault.Times = t
	default:
		return bad()
	}
	for _, prev := range p.sc.Faults {
		if prev.Key == fault.Key {
			return p.errf(n, "duplicate provider-error for %s (first at line %d)", fault.Key, prev.Line)
		}
	}
	p.sc.Faults = append(p.sc.Faults, fault)
	return nil
}
