package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"
)

// take is the fixed-time take the older tests use: the lease ends at until.
func take(c engine.Conn, id int64, worker string, until time.Time) (engine.Message, error) {
	res, err := c.TakeUnconditional(context.Background(), engine.TakeRequest{ID: id, Worker: worker, LeaseTimes: engine.LeaseTimes{Now: t0, Until: until}})
	return res.Message, err
}

// renew is the fixed-time renewal the older tests use.
func renew(c engine.Conn, m engine.Message, worker string, until time.Time) (bool, error) {
	res, err := c.Renew(context.Background(), engine.RenewRequest{Worker: worker, Message: m, LeaseTimes: engine.LeaseTimes{Now: t0, Until: until}})
	return res.Renewed, err
}

// holdWriteLock takes SQLite's write lock from a connection of its own, as another process
// would (BEGIN IMMEDIATE), and gives it up after d. It returns once the lock is held; the
// channel receives the time read just before the ROLLBACK, which is no later than the moment
// anyone else can have the lock.
func holdWriteLock(t *testing.T, db *store.DB, d time.Duration) <-chan time.Time {
	t.Helper()
	ctx := context.Background()
	pool, err := sql.Open("sqlite", "file:"+db.Path()+"?mode=rw&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	conn, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(d)
		at := time.Now()
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Errorf("release the write lock: %v", err)
		}
		conn.Close()
		released <- at
	}()
	return released
}

// A request that carries a wall clock has its time read by the store after BEGIN IMMEDIATE
// got the write lock: a worker that waited 2 s for the lock gets a lease that ends a full
// lease after it got the lock, not one that ended while it waited (the old behaviour: the time
// was read before the wait). The same holds for the take, the renewal and the finalize's
// ProcessedAtUtc. Without a clock, the fixed times of the request are written as given (the
// scripted lessons, tested elsewhere).
func TestWallClockIsReadInsideTheTransaction(t *testing.T) {
	const lease = time.Second
	type got struct {
		at, until time.Time // what the call reported
		row       engine.Row
	}
	cases := []struct {
		name string
		hold time.Duration
		// prepare runs before the lock is taken; act runs while it is held, and waits.
		prepare func(t *testing.T, c engine.Conn) engine.Message
		act     func(t *testing.T, c engine.Conn, m engine.Message) got
		// leases: the action writes a lease end (all but the finalize)
		leases bool
	}{
		{name: "claim", hold: 2 * time.Second, leases: true,
			prepare: func(*testing.T, engine.Conn) engine.Message { return engine.Message{} },
			act: func(t *testing.T, c engine.Conn, _ engine.Message) got {
				res, err := c.Claim(context.Background(), engine.ClaimRequest{Worker: "Worker-A", Clock: time.Now, Lease: lease})
				if err != nil || res.Outcome != engine.ClaimWon {
					t.Fatalf("claim: %+v %v", res, err)
				}
				return got{at: res.At, until: res.Message.LockedUntil}
			}},
		{name: "take", hold: 500 * time.Millisecond, leases: true,
			prepare: func(t *testing.T, c engine.Conn) engine.Message {
				m, ok, err := c.SelectCandidate(context.Background(), t0)
				if !ok || err != nil {
					t.Fatalf("select: %v %v", ok, err)
				}
				return m
			},
			act: func(t *testing.T, c engine.Conn, m engine.Message) got {
				res, err := c.TakeUnconditional(context.Background(), engine.TakeRequest{ID: m.ID, Worker: "Worker-A", LeaseTimes: engine.LeaseTimes{Clock: time.Now, Lease: lease}})
				if err != nil {
					t.Fatalf("take: %v", err)
				}
				return got{at: res.At, until: res.Message.LockedUntil}
			}},
		{name: "renew", hold: 500 * time.Millisecond, leases: true,
			prepare: func(t *testing.T, c engine.Conn) engine.Message {
				res, err := c.Claim(context.Background(), engine.ClaimRequest{Worker: "Worker-A", Clock: time.Now, Lease: lease})
				if err != nil || res.Outcome != engine.ClaimWon {
					t.Fatalf("claim: %+v %v", res, err)
				}
				return res.Message
			},
			act: func(t *testing.T, c engine.Conn, m engine.Message) got {
				res, err := c.Renew(context.Background(), engine.RenewRequest{Worker: "Worker-A", Message: m, LeaseTimes: engine.LeaseTimes{Clock: time.Now, Lease: lease}})
				if err != nil || !res.Renewed {
					t.Fatalf("renew: %+v %v", res, err)
				}
				return got{at: res.At, until: res.Until}
			}},
		{name: "finalize", hold: 500 * time.Millisecond,
			prepare: func(t *testing.T, c engine.Conn) engine.Message {
				res, err := c.Claim(context.Background(), engine.ClaimRequest{Worker: "Worker-A", Clock: time.Now, Lease: time.Minute})
				if err != nil || res.Outcome != engine.ClaimWon {
					t.Fatalf("claim: %+v %v", res, err)
				}
				return res.Message
			},
			act: func(t *testing.T, c engine.Conn, m engine.Message) got {
				req := paid("Worker-A", m)
				req.Now, req.Clock = time.Time{}, time.Now
				res, err := c.Finalize(context.Background(), req)
				if err != nil || !res.Committed {
					t.Fatalf("finalize: %+v %v", res, err)
				}
				return got{at: res.At}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := newDB(t, 1)
			conn := connect(t, db)
			m := c.prepare(t, conn)
			released := holdWriteLock(t, db, c.hold)
			asked := time.Now()
			g := c.act(t, conn, m)
			returned := time.Now()
			rel := <-released
			g.row = rowByKey(t, db, "PAY-001")
			if waited := returned.Sub(asked); waited < c.hold*9/10 {
				t.Fatalf("the %s did not wait for the write lock (%s)", c.name, waited)
			}
			// The time used is when the lock was held: no earlier than its release (to the
			// millisecond, as stored), no later than the call's return.
			if g.at.Before(rel.Truncate(time.Millisecond)) || g.at.After(returned) {
				t.Errorf("time used %s; the lock was released at %s and the call returned at %s",
					engine.FormatClock(g.at), engine.FormatClock(rel), engine.FormatClock(returned))
			}
			if !c.leases {
				if !g.row.ProcessedAt.Equal(g.at) {
					t.Errorf("ProcessedAtUtc %s, the finalize reported %s", engine.FormatClock(g.row.ProcessedAt), engine.FormatClock(g.at))
				}
				return
			}
			// The lease granted ends no earlier than a full lease after the lock was held, and so
			// after the commit plus the lease, to within the statements between the clock
			// reading and the COMMIT (microseconds; 50 ms allowed on a loaded machine).
			if g.until.Before(rel.Add(lease)) {
				t.Errorf("lease ends %s, before the lock's release %s + %s", engine.FormatClock(g.until), engine.FormatClock(rel), lease)
			}
			if g.until.Before(returned.Add(lease - 50*time.Millisecond)) {
				t.Errorf("lease ends %s; the call committed by %s, so it should end about %s",
					engine.FormatClock(g.until), engine.FormatClock(returned), engine.FormatClock(returned.Add(lease)))
			}
			if !g.row.LockedUntil.Equal(g.until) {
				t.Errorf("LockedUntilUtc %s, the call reported %s", engine.FormatClock(g.row.LockedUntil), engine.FormatClock(g.until))
			}
			t.Logf("waited %s; lease ends %s after the release, %s after the return",
				returned.Sub(asked).Round(time.Millisecond), g.until.Sub(rel), g.until.Sub(returned))
		})
	}
}

// With a clock, the lease end is rounded up to the millisecond and now truncated: the lease
// stored is never shorter than asked.
func TestWallTimesRounding(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 1_500_000, time.UTC) // 09:00:00.0015
	now, until := engine.ClaimRequest{Clock: func() time.Time { return at }, Lease: time.Second}.Times()
	if want := at.Truncate(time.Millisecond); !now.Equal(want) {
		t.Errorf("now %s, want %s", now.Format(time.StampMicro), want.Format(time.StampMicro))
	}
	if want := at.Add(time.Second + 500*time.Microsecond); !until.Equal(want) {
		t.Errorf("until %s, want %s", until.Format(time.StampMicro), want.Format(time.StampMicro))
	}
	fixed := engine.ClaimRequest{Now: t0, Until: t0.Add(time.Second)}
	if n, u := fixed.Times(); !n.Equal(t0) || !u.Equal(t0.Add(time.Second)) {
		t.Errorf("fixed times changed: %s %s", n, u)
	}
}
