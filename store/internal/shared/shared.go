// Package shared holds the code that both of leaselab's stores, SQLite (store) and
// PostgreSQL (store/postgres), run alike: the loops over a result set, the order a batch claim
// returns, how a finalize's transaction becomes its result, the chunks of a bulk seed, the crash
// tests' finalize hold and the one-line SQL of a trace. Only
// the SQL and the driver differ between the two; what is the same is here, once.
package shared

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"leaselab/engine"
)

// ErrRolledBack ends a finalize transaction whose guarded UPDATE changed no row.
var ErrRolledBack = errors.New("guarded update changed no row")

// Finalized is how a finalize's transaction ends as its result: ErrRolledBack (the guard
// changed no row; res says why) gives res, not committed, and no error; another error gives
// nothing but the error; no error gives res, committed.
func Finalized(res engine.FinalizeResult, err error) (engine.FinalizeResult, error) {
	switch {
	case errors.Is(err, ErrRolledBack):
		return res, nil
	case err != nil:
		return engine.FinalizeResult{}, err
	}
	res.Committed = true
	return res, nil
}

// Fused is how the fused step's transaction (finalize, then the next claim) ends: when the
// finalize's guard changed no row (ErrRolledBack) the whole transaction rolled back, so the
// claim is made on its own (claim) and both results are returned, the finalize not committed;
// any other error gives nothing but the error.
func Fused(fres engine.FinalizeResult, cres engine.ClaimResult, err error, claim func() (engine.ClaimResult, error)) (engine.FinalizeResult, engine.ClaimResult, error) {
	switch {
	case errors.Is(err, ErrRolledBack):
		cres, err = claim()
		if err != nil {
			return fres, engine.ClaimResult{}, err
		}
		return fres, cres, nil
	case err != nil:
		return engine.FinalizeResult{}, engine.ClaimResult{}, err
	}
	fres.Committed = true
	return fres, cres, nil
}

// WithTimeout bounds ctx by d unless it has a deadline of its own.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// SeedChunks runs a bulk seed of n payments as write(from, to) over 1-based, inclusive ranges of
// at most size payments, in order. A write that fails stops the seed with an
// engine.PartialSeedError that counts the payments the earlier ranges wrote.
func SeedChunks(n, size int, write func(from, to int) error) error {
	if n < 0 {
		return fmt.Errorf("seed: negative count %d", n)
	}
	for from := 1; from <= n; from += size {
		to := min(from+size-1, n)
		if err := write(from, to); err != nil {
			return &engine.PartialSeedError{Written: from - 1, Of: n, Err: err}
		}
	}
	return nil
}

// Verb is a statement's label when no name is known for it: its first word, in lower case.
func Verb(query string) string {
	f := strings.Fields(query)
	if len(f) == 0 {
		return ""
	}
	return strings.ToLower(f[0])
}

// Redrive is a redrive of key on either store: update runs its guarded UPDATE (one statement)
// and says how many rows it changed; when none, state reads the message (noRow: there is none)
// to say why: no such message, or engine.ErrNotDeadLettered.
func Redrive(key string, describe func(error) error, update func() (int64, error), state func() (engine.RetryState, error), noRow error) error {
	n, err := update()
	if err != nil {
		return fmt.Errorf("redrive %s: %w", key, describe(err))
	}
	if n == 1 {
		return nil
	}
	st, err := state()
	switch {
	case errors.Is(err, noRow):
		return fmt.Errorf("redrive %s: %w", key, engine.ErrNoSuchMessage)
	case err != nil:
		return fmt.Errorf("redrive %s: %w", key, err)
	}
	return fmt.Errorf("redrive %s: it is %s, %w; nothing was changed", key, st.Status, engine.ErrNotDeadLettered)
}
