package storetest

import (
	"database/sql"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// ExecFile runs stmts on the SQLite file at path with a plain connection of its own, as sqlite3
// would: no busy timeout, no pragmas, outside any leaselab store. An error fails the test.
func ExecFile(t testing.TB, path, stmts string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmts); err != nil {
		t.Fatalf("%s: %v", stmts, err)
	}
}
