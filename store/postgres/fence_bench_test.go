package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store/postgres"
)

// BenchmarkFenceCost is issue 32's measure of what the fence costs: leaselab's batch finalize
// (FinalizeBatch's one statement, finalizeManySQL, every row guarded by Processing, its owner
// and its lease version) against the same statement guarded by the row's status alone, as a
// completer that checks the state only writes it (River's JobSetStateIfRunningMany). Each
// sub-benchmark seeds b.N messages, claims them all (not timed), then finalizes them in batches
// of 16 on one connection: msgs/s, and CPU per message of the client and, with
// LEASELAB_BENCH_PGPID, of the server, over the finalizes only. The variants alternate when
// -count repeats them; .ci/bench-pg.sh runs them on a server that syncs its commits and one that
// does not (BENCH=FenceCost):
//
//	LEASELAB_PG=postgres://… go test ./store/postgres -run '^$' -bench FenceCost -benchtime 4000x -count 5
func BenchmarkFenceCost(b *testing.B) {
	if postgres.StatusOnlyFinalizeManySQL == "" {
		b.Fatal("finalizeManySQL's guard changed: StatusOnlyFinalizeManySQL (fence_export_test.go) cuts nothing")
	}
	b.Run("fenced/owner+version", func(b *testing.B) { benchFence(b, postgres.FinalizeManySQL, true) })
	b.Run("status-only", func(b *testing.B) { benchFence(b, postgres.StatusOnlyFinalizeManySQL, false) })
}

// fenceBatch is the batch the fence's benchmark finalizes at once, as BenchmarkPaths' batch16.
const fenceBatch = 16

func benchFence(b *testing.B, query string, fence bool) {
	ctx := context.Background()
	db := newDB(b)
	if err := db.SeedBulk(ctx, b.N, benchNow); err != nil {
		b.Fatal(err)
	}
	ec, err := db.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer ec.Close()
	c := ec.(*postgres.Conn)
	var msgs []engine.Message
	for len(msgs) < b.N {
		got, err := c.ClaimBatch(ctx, benchClaim("bench"), fenceBatch)
		if err != nil {
			b.Fatal(err)
		}
		if len(got) == 0 {
			b.Fatalf("claimed %d of %d", len(msgs), b.N)
		}
		msgs = append(msgs, got...)
	}
	reqs := make([]engine.FinalizeRequest, len(msgs))
	for i, m := range msgs {
		reqs[i] = benchFin("bench", m)
		reqs[i].Fencing = fence
	}
	cpu := readCPU()
	b.ResetTimer()
	start := time.Now()
	done := 0
	for i := 0; i < len(reqs); i += fenceBatch {
		n, err := c.FinalizeManyWith(ctx, query, reqs[i:min(i+fenceBatch, len(reqs))])
		if err != nil {
			b.Fatal(err)
		}
		done += n
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cpu.report(b, b.N, true)
	if done != b.N {
		b.Fatalf("finalized %d of %d", done, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

// TestFenceCostStatements: the status-only copy is the fenced statement with its guard cut, and
// both finalize a claimed batch; only the fenced one refuses a stale lease version.
func TestFenceCostStatements(t *testing.T) {
	if postgres.StatusOnlyFinalizeManySQL == "" {
		t.Fatal("finalizeManySQL's guard changed: StatusOnlyFinalizeManySQL cuts nothing")
	}
	ctx := context.Background()
	for _, v := range []struct {
		query        string
		fence        bool
		staleWritten int
	}{{postgres.FinalizeManySQL, true, 0}, {postgres.StatusOnlyFinalizeManySQL, false, 1}} {
		db := seededDB(t, 2)
		ec, err := db.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := ec.(*postgres.Conn)
		msgs, err := c.ClaimBatch(ctx, benchClaim("bench"), 2)
		if err != nil || len(msgs) != 2 {
			t.Fatalf("claim: %v %v", msgs, err)
		}
		stale := benchFin("bench", msgs[0])
		stale.Message.LeaseVersion-- // an earlier lease of the same row, the same owner
		stale.Fencing = v.fence
		n, err := c.FinalizeManyWith(ctx, v.query, []engine.FinalizeRequest{stale})
		if err != nil || n != v.staleWritten {
			t.Errorf("%s: a stale version finalized %d (want %d): %v", fmt.Sprint(v.fence), n, v.staleWritten, err)
		}
		fresh := benchFin("bench", msgs[1])
		fresh.Fencing = v.fence
		if n, err := c.FinalizeManyWith(ctx, v.query, []engine.FinalizeRequest{fresh}); err != nil || n != 1 {
			t.Errorf("fence %v: the live lease finalized %d: %v", v.fence, n, err)
		}
		ec.Close()
	}
}
