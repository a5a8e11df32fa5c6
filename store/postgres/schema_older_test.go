package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"leaselab/store/postgres"
	"leaselab/store/storetest"
)

// A schema an older leaselab made (before the due claim's indexes; before dead letters: no
// NextAttemptUtc) is recognised as leaselab's, refused with what to do while it holds rows, and
// made again only with --reset.
func TestOlderLeaselabSchemaIsRecognised(t *testing.T) {
	def, ok := postgres.OlderSchemaSQL()
	if !ok || strings.Contains(def, "NextAttemptUtc") || strings.Contains(def, "DeadLettered") {
		t.Fatalf("the older schema is not derived from schema.sql any more (ok %v)", ok)
	}
	for i := range postgres.OlderSchemas {
		def, ok := postgres.OlderSchemaSQLOf(i)
		if !ok || strings.Contains(def, "OutboxMessages_Fresh") {
			t.Fatalf("older schema %d is not derived from schema.sql any more (ok %v)", i, ok)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { testOlderSchema(t, i, def) })
	}
}

func testOlderSchema(t *testing.T, i int, def string) {
	ctx := context.Background()
	name := fmt.Sprintf("leaselab_test_older%d_%d", i, pid)
	storetest.DropSchemaAtEnd(t, name)
	conn, err := pgx.Connect(ctx, storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"CREATE SCHEMA " + name, "SET search_path = " + name, def,
		fmt.Sprintf("COMMENT ON SCHEMA %s IS '%s'", name, postgres.SchemaMark),
		`INSERT INTO Payments (IdempotencyKey, Amount, CreatedAtUtc) VALUES ('PAY-001', 1000, now())`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	_, err = postgres.Create(ctx, withSchema(t, name), postgres.Options{})
	if !errors.Is(err, postgres.ErrOlderSchema) || errors.Is(err, postgres.ErrNotOurs) || !strings.Contains(err.Error(), "--reset") {
		t.Fatalf("Create(older schema) = %v, want ErrOlderSchema saying --reset", err)
	}
	if _, err := postgres.Open(ctx, withSchema(t, name)); !errors.Is(err, postgres.ErrOlderSchema) {
		t.Fatalf("Open(older schema) = %v, want ErrOlderSchema", err)
	}
	db, err := postgres.Create(ctx, withSchema(t, name), postgres.Options{Reset: true})
	if err != nil {
		t.Fatalf("Create(older schema, reset) = %v", err)
	}
	db.Close()
	if _, err := postgres.Open(ctx, withSchema(t, name)); err != nil {
		t.Fatalf("Open after the reset: %v", err)
	}
}
