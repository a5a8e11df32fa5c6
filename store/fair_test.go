package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"leaselab/engine"
)

// Waiters get the write lock in the order they asked for it, and a newcomer cannot take it while
// someone waits.
func TestWriteGateIsFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newWriteGate()
		ctx := context.Background()
		if err := g.enter(ctx); err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			order []int
		)
		for i := 1; i <= 5; i++ {
			go func() {
				if err := g.enter(ctx); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				g.leave()
			}()
			synctest.Wait() // waiter i is queued before waiter i+1 asks
		}
		g.leave()
		synctest.Wait()
		if fmt.Sprint(order) != "[1 2 3 4 5]" {
			t.Fatalf("order = %v, want [1 2 3 4 5]", order)
		}
	})
}

func TestWriteGateExcludes(t *testing.T) {
	g := newWriteGate()
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if err := g.enter(context.Background()); err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				if n > most.Load() {
					most.Store(n)
				}
				inside.Add(-1)
				g.leave()
			}
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d goroutines inside at once, want 1", most.Load())
	}
}

// A waiter gives up after BusyTimeout with engine.ErrBusy, as SQLite's busy_timeout would, or
// when its context ends; either way the queue still works for the others.
func TestWriteGateGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newWriteGate()
		if err := g.enter(context.Background()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := g.enter(context.Background())
		if !errors.Is(err, engine.ErrBusy) || time.Since(start) != BusyTimeout {
			t.Fatalf("err = %v after %v, want ErrBusy after %v", err, time.Since(start), BusyTimeout)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := g.enter(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's deadline", err)
		}
		g.leave()
		if err := g.enter(context.Background()); err != nil {
			t.Fatalf("enter after the holder left: %v", err)
		}
	})
}

// With FairWriteLock every worker connection of the DB shares its queue; without it, none
// queues. Claims through the queue are still exact: racing connections never share a row.
func TestFairWriteLockOption(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fair.db")
	plain, err := Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := plain.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.(*Conn).gate != nil {
		t.Fatal("a DB from Create queues its connections")
	}
	c.Close()
	plain.Close()

	db, err := CreateWith(ctx, path, Options{FairWriteLock: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SeedBulk(ctx, 40, engine.Epoch); err != nil {
		t.Fatal(err)
	}
	reopened, err := OpenWith(ctx, path, Options{FairWriteLock: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if reopened.gate == nil || reopened.gate == db.gate {
		t.Fatal("OpenWith: want a queue of its own")
	}

	const workers = 4
	claimed := make([][]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		ec, err := db.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conn := ec.(*Conn)
		defer conn.Close()
		if conn.gate != db.gate {
			t.Fatal("a worker connection does not share the DB's queue")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := engine.ClaimRequest{Worker: fmt.Sprintf("Worker-%d", w), Now: engine.Epoch, Until: engine.Epoch.Add(time.Minute)}
			for {
				res, err := conn.Claim(ctx, req)
				if err != nil || res.Outcome != engine.ClaimWon {
					errs[w] = err
					return
				}
				claimed[w] = append(claimed[w], res.Message.IdempotencyKey)
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for w := range workers {
		if errs[w] != nil {
			t.Fatal(errs[w])
		}
		for _, k := range claimed[w] {
			if seen[k] {
				t.Fatalf("%s claimed twice", k)
			}
			seen[k] = true
		}
	}
	if len(seen) != 40 {
		t.Fatalf("%d messages claimed, want 40", len(seen))
	}
}
