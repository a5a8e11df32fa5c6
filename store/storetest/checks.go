package storetest

import (
	"context"
	"testing"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
)

// RunScenario runs a built-in scenario to its end on db and returns its session and summary.
func RunScenario(t testing.TB, db engine.DB, name string) (*engine.Session, *engine.Summary) {
	t.Helper()
	data, src, ok := assets.Scenario(name)
	if !ok {
		t.Fatalf("no built-in scenario %q", name)
	}
	sc, err := scenario.Parse(src, data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := engine.NewSession(ctx, sc, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Script().RunToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, sum
}

// Each safety check must be able to fail: damage a finished run's database (or its gateway)
// and watch the matching check turn red.
func testChecksCanFail(t *testing.T, b Backend) {
	cases := []struct {
		check string
		harm  func(t *testing.T, s *engine.Session)
	}{
		{engine.CheckNoDuplicates, func(t *testing.T, s *engine.Session) {
			b.Exec(t, s.DB(), `INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, Status, CreatedAtUtc, ProcessedAtUtc)
				SELECT IdempotencyKey, Type, Payload, 'Processed', CreatedAtUtc, ProcessedAtUtc FROM OutboxMessages WHERE Id = 1`)
		}},
		{engine.CheckProviderTxIDs, func(t *testing.T, s *engine.Session) {
			b.Exec(t, s.DB(), `UPDATE Payments SET TransactionId = 'txn_forged' WHERE PaymentStatus = 'Paid'`)
		}},
		{engine.CheckProviderTxIDs, func(t *testing.T, s *engine.Session) {
			b.Exec(t, s.DB(), `UPDATE Payments SET TransactionId = 'txn_PAY-003_1' WHERE PaymentStatus = 'Failed'`)
		}},
		{engine.CheckNoneLost, func(t *testing.T, s *engine.Session) {
			b.Exec(t, s.DB(), `UPDATE OutboxMessages SET Status = 'Pending', ProcessedAtUtc = NULL WHERE Id = 2`)
		}},
		{engine.CheckOneCreation, func(t *testing.T, s *engine.Session) {
			g := engine.NewGateway(s.DB())
			if err := g.CreatePayment(context.Background(), "Worker-A", engine.NewPayment{Key: "PAY-001", Amount: 1}); err == nil {
				t.Fatal("a second payment with the same key was accepted")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.check, func(t *testing.T) {
			s, sum := RunScenario(t, b.New(t), "after")
			if !check(t, sum, c.check) {
				t.Fatalf("%s failed before any harm", c.check)
			}
			c.harm(t, s)
			if c.check == engine.CheckOneCreation {
				return // the gateway's own count is per gateway; the database refused the row
			}
			sum, err := s.Summarize(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if check(t, sum, c.check) || sum.Passed {
				t.Fatalf("%s still holds after the harm (verdict passed %v)", c.check, sum.Passed)
			}
		})
	}
}

func check(t *testing.T, sum *engine.Summary, id string) bool {
	t.Helper()
	for _, c := range sum.Checks {
		if c.ID == id {
			return c.OK
		}
	}
	t.Fatalf("no check %s", id)
	return false
}
