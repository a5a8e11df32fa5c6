package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store/postgres"
	"leaselab/store/storetest"
)

// Servers is the package's functions with engine's types: it tells a server's URL from a file
// and a URL that names its schema from one that does not; a schema it made opens again; a
// temporary one is its own; a failure is a nil engine.Backend (not a nil *postgres.DB inside a
// non-nil interface) with the store's EnvError.
func TestServersCreateOpenAndFail(t *testing.T) {
	var servers postgres.Servers
	for s, want := range map[string]bool{"postgres://u@h/db": true, "postgresql://u@h/db": true, "leaselab.db": false, "/tmp/postgres://x": false} {
		if servers.IsURL(s) != want {
			t.Errorf("IsURL(%q) = %v, want %v", s, !want, want)
		}
	}
	if servers.HasSchema("postgres://u@h/db") || !servers.HasSchema("postgres://u@h/db?schema=s") {
		t.Errorf("HasSchema: want false without ?schema=, true with it")
	}
	ctx := context.Background()
	name := fmt.Sprintf("leaselab_test_servers_%d", pid)
	storetest.DropSchemaAtEnd(t, name)
	db, err := servers.Create(ctx, withSchema(t, name), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SeedBulk(ctx, 2, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = servers.Open(ctx, withSchema(t, name))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := db.Counts(ctx); err != nil || c.OutboxPending != 2 {
		t.Errorf("Open: counts %+v, %v; want 2 pending", c, err)
	}
	db.Close()
	tmp, err := servers.CreateTemp(ctx, storetest.PostgresURL(t), time.Now(), fmt.Sprintf("servers_%d", pid))
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	var env *engine.EnvError
	db, err = servers.Open(ctx, "postgres://u@127.0.0.1:1/db?schema=s&connect_timeout=2")
	if db != nil || !errors.As(err, &env) {
		t.Errorf("Open(no server) = %#v, %v; want a nil Backend and an EnvError", db, err)
	}
}
