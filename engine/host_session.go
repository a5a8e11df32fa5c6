package engine

import (
	"context"
	"fmt"
)

// Host runs a hosted worker (RunHost) as the session's worker i (the command line hosts worker
// 0; several hosted workers share a session in stress): its name and LockedBy, the session's
// lease, provider and ledger. Each provider call takes the settings' ProviderLatency of real
// time on opt.Wall; every event is recorded in the ledger (as a worker's are, so that the checks
// and the counts see the hosted worker's claims, calls and finalizes) before it goes to
// opt.OnEvent. What opt leaves zero the session fills in.
func (s *Session) Host(ctx context.Context, i int, opt HostOptions) (HostStats, error) {
	if i < 0 || i >= len(s.crew.workers) {
		return HostStats{}, fmt.Errorf("hosted worker: the session has no worker %d", i)
	}
	w := s.crew.workers[i]
	st := s.Settings()
	if opt.Name == "" {
		opt.Name, opt.ID = w.Name, w.ID
	}
	if opt.Lease == 0 {
		opt.Lease, opt.HeartbeatEvery = st.Lease, st.HeartbeatEvery
	}
	if opt.Wall == nil {
		opt.Wall = SystemWall{}
	}
	if w.skewed(st) {
		// A worker whose clock is off writes its leases, and judges others', by its own clock.
		opt.Wall = skewedWall{Wall: opt.Wall, skew: w.spec.Skew}
	}
	wall, latency, name := opt.Wall, st.ProviderLatency, opt.Name
	if opt.Process == nil {
		opt.Process = func(ctx context.Context, m Message) (ProviderResult, error) {
			if latency > 0 {
				select {
				case <-ctx.Done():
					return ProviderResult{}, ctx.Err()
				case <-wall.After(latency):
				}
			}
			res := s.provider.CheckPaymentStatus(m.IdempotencyKey)
			s.ledger.update(name, func(l *WorkerLedger) { l.ProcessingAttempts++ })
			s.ledger.attempt(m.IdempotencyKey, Attempt{Worker: name, At: wall.Now(), Version: m.LeaseVersion})
			return res, nil
		}
	}
	then := opt.OnEvent
	opt.OnEvent = func(e Event) {
		hostCounts(s.ledger, s.env, name, e)
		e = s.ledger.record(e)
		if then != nil {
			then(e)
		}
	}
	return RunHost(ctx, s.db, opt)
}

// hostCounts counts one of a hosted worker's events in its ledger, as the worker's own actions
// count theirs.
func hostCounts(l *Ledger, env *env, name string, e Event) {
	switch {
	case e.Kind == EvClaim:
		env.world.Add(1)
		l.update(name, func(l *WorkerLedger) { l.ClaimsWon++ })
	case e.Kind == EvFinalize && e.Outcome == OutcomeCommitted:
		env.world.Add(1)
		l.commit(e.Key)
		l.update(name, func(l *WorkerLedger) { l.Finalized++ })
	case e.Kind == EvFinalize:
		l.update(name, func(l *WorkerLedger) { l.RejectedFinalizes++ })
	case e.Kind == EvRenew && e.Outcome == OutcomeRenewed:
		l.update(name, func(l *WorkerLedger) { l.Renewals++ })
	case e.Kind == EvRenew:
		l.update(name, func(l *WorkerLedger) { l.LostRenewals++ })
	}
}
