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
// someone waits. With turn 0 every transaction is a turn.
func TestWriteGateIsFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newWriteGate(0, fairGrace)
		ctx := context.Background()
		holder := &Conn{}
		if err := g.enter(ctx, holder); err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			order []int
		)
		for i := 1; i <= 5; i++ {
			c := &Conn{}
			go func() {
				if err := g.enter(ctx, c); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				g.leave(c)
			}()
			synctest.Wait() // waiter i is queued before waiter i+1 asks
		}
		g.leave(holder)
		synctest.Wait()
		if fmt.Sprint(order) != "[1 2 3 4 5]" {
			t.Fatalf("order = %v, want [1 2 3 4 5]", order)
		}
	})
}

// The owner of a turn runs its transactions back to back while others wait, until its turn is
// over; then the first waiter gets the next turn, and the old owner queues behind the others.
func TestWriteGateTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newWriteGate(fairTurn, fairGrace)
		ctx := context.Background()
		a, b := &Conn{}, &Conn{}
		if err := g.enter(ctx, a); err != nil {
			t.Fatal(err)
		}
		var bIn atomic.Bool
		go func() {
			if err := g.enter(ctx, b); err != nil {
				t.Error(err)
				return
			}
			bIn.Store(true)
		}()
		synctest.Wait()
		g.leave(a)
		if err := g.enter(ctx, a); err != nil || bIn.Load() {
			t.Fatalf("a's second transaction in its turn: err %v, b inside %v", err, bIn.Load())
		}
		time.Sleep(fairTurn) // a's transaction outlasts the turn
		g.leave(a)
		synctest.Wait()
		if !bIn.Load() {
			t.Fatal("b did not get the turn after a's turn ended")
		}
		var aIn atomic.Bool
		go func() {
			if err := g.enter(ctx, a); err == nil {
				aIn.Store(true)
			}
		}()
		synctest.Wait()
		if aIn.Load() {
			t.Fatal("a took the lock during b's transaction")
		}
		g.leave(b)
		time.Sleep(fairGrace) // b does not come back
		synctest.Wait()
		if !aIn.Load() {
			t.Fatal("a did not get the turn once b went quiet")
		}
		g.leave(a)
	})
}

func TestWriteGateExcludes(t *testing.T) {
	for _, turn := range []time.Duration{0, fairTurn} {
		g := newWriteGate(turn, fairGrace)
		var inside, most atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			c := &Conn{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 200 {
					if err := g.enter(context.Background(), c); err != nil {
						t.Error(err)
						return
					}
					n := inside.Add(1)
					if n > most.Load() {
						most.Store(n)
					}
					inside.Add(-1)
					g.leave(c)
				}
			}()
		}
		wg.Wait()
		if most.Load() != 1 {
			t.Fatalf("turn %v: %d goroutines inside at once, want 1", turn, most.Load())
		}
	}
}

// A waiter gives up after BusyTimeout with engine.ErrBusy, as SQLite's busy_timeout would, or
// when its context ends; either way the queue still works for the others.
func TestWriteGateGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newWriteGate(fairTurn, fairGrace)
		holder, waiter := &Conn{}, &Conn{}
		if err := g.enter(context.Background(), holder); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := g.enter(context.Background(), waiter)
		if !errors.Is(err, engine.ErrBusy) || time.Since(start) != BusyTimeout {
			t.Fatalf("err = %v after %v, want ErrBusy after %v", err, time.Since(start), BusyTimeout)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := g.enter(ctx, waiter); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's deadline", err)
		}
		g.leave(holder)
		if err := g.enter(context.Background(), waiter); err != nil {
			t.Fatalf("enter after the holder left: %v", err)
		}
		g.leave(waiter)
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
