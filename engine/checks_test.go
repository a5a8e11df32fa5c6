package engine_test

import (
	"context"
	"database/sql"
	"net/url"
	"testing"

	"leaselab/engine"
)

// Each safety check must be able to fail: damage a finished run's database (or its gateway)
// and watch the matching check turn red.
func TestChecksCanFail(t *testing.T) {
	cases := []struct {
		check string
		harm  func(t *testing.T, s *engine.Session, raw *sql.DB)
	}{
		{engine.CheckNoDuplicates, func(t *testing.T, s *engine.Session, raw *sql.DB) {
			exec(t, raw, `INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, Status, CreatedAtUtc, ProcessedAtUtc)
				SELECT IdempotencyKey, Type, Payload, 'Processed', CreatedAtUtc, ProcessedAtUtc FROM OutboxMessages WHERE Id = 1`)
		}},
		{engine.CheckProviderTxIDs, func(t *testing.T, s *engine.Session, raw *sql.DB) {
			exec(t, raw, `UPDATE Payments SET TransactionId = 'txn_forged' WHERE PaymentStatus = 'Paid'`)
		}},
		{engine.CheckProviderTxIDs, func(t *testing.T, s *engine.Session, raw *sql.DB) {
			exec(t, raw, `UPDATE Payments SET TransactionId = 'txn_PAY-003_1' WHERE PaymentStatus = 'Failed'`)
		}},
		{engine.CheckNoneLost, func(t *testing.T, s *engine.Session, raw *sql.DB) {
			exec(t, raw, `UPDATE OutboxMessages SET Status = 'Pending', ProcessedAtUtc = NULL WHERE Id = 2`)
		}},
		{engine.CheckOneCreation, func(t *testing.T, s *engine.Session, raw *sql.DB) {
			g := engine.NewGateway(s.DB())
			if err := g.CreatePayment(context.Background(), "Worker-A", engine.NewPayment{Key: "PAY-001", Amount: 1}); err == nil {
				t.Fatal("a second payment with the same key was accepted")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.check, func(t *testing.T) {
			s, sum := runToEnd(t, scenario(t, "after", ""))
			if !check(t, sum, c.check) {
				t.Fatalf("%s failed before any harm", c.check)
			}
			u := url.URL{Scheme: "file", OmitHost: true, Path: s.DB().Path()} // escapes the # of "#01"
			raw, err := sql.Open("sqlite", u.String()+"?_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			c.harm(t, s, raw)
			if c.check == engine.CheckOneCreation {
				return // the gateway's own count is per gateway; the database refused the row
			}
			sum, err = s.Summarize(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if check(t, sum, c.check) || sum.Passed {
				t.Fatalf("%s still holds after the harm (verdict passed %v)", c.check, sum.Passed)
			}
		})
	}
}

func exec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
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
