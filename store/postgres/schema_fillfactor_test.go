package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"leaselab/store/postgres"
	"leaselab/store/storetest"
)

// A schema made with another fillfactor (schema.sql had 80 before issue 22) is still this
// leaselab's: the schema check leaves a table's fillfactor out, and nothing else.
func TestSchemaCheckIgnoresFillfactorOnly(t *testing.T) {
	ctx := context.Background()
	name := fmt.Sprintf("leaselab_test_fillfactor_%d", pid)
	storetest.DropSchemaAtEnd(t, name)
	db, err := postgres.Create(ctx, withSchema(t, name), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	conn, err := pgx.Connect(ctx, storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	alter := func(q string) {
		t.Helper()
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	alter("ALTER TABLE " + name + ".OutboxMessages SET (fillfactor = 80)")
	alter("ALTER TABLE " + name + ".Payments SET (fillfactor = 100)")
	db, err = postgres.Open(ctx, withSchema(t, name))
	if err != nil {
		t.Fatalf("Open(schema with fillfactor 80) = %v, want it accepted", err)
	}
	db.Close()
	alter("ALTER TABLE " + name + ".OutboxMessages SET (autovacuum_enabled = false)")
	if db, err := postgres.Open(ctx, withSchema(t, name)); err == nil {
		db.Close()
		t.Fatal("Open(schema with another storage parameter) succeeded, want it refused")
	}
}
