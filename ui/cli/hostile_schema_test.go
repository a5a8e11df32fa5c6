package cli

import (
	"testing"
)

// User objects whose names start like SQLite's own ("sqlite_" is reserved, and only that, with
// that case): the schema check must see them, so the file is not leaselab's and is left as it
// was, --reset or not.
func TestHostileSchemaNames(t *testing.T) {
	userTable := func(t *testing.T, dir string) string {
		return altered(t, dir, "CREATE TABLE SqliteUserData (Body TEXT); INSERT INTO SqliteUserData VALUES ('mine')")
	}
	backup := func(t *testing.T, dir string) string {
		return altered(t, dir, "CREATE TABLE sqlitebackup (Body TEXT); INSERT INTO sqlitebackup VALUES ('mine')")
	}
	trigger := func(t *testing.T, dir string) string {
		return altered(t, dir, `CREATE TABLE UserRows (Body TEXT); INSERT INTO UserRows VALUES ('mine');
			CREATE TRIGGER sqliteAudit AFTER INSERT ON OutboxMessages BEGIN DELETE FROM UserRows; END`)
	}
	onlyTrigger := func(t *testing.T, dir string) string {
		return altered(t, dir, `CREATE TRIGGER sqliteAudit AFTER INSERT ON OutboxMessages BEGIN SELECT 1; END`)
	}
	view := func(t *testing.T, dir string) string {
		return altered(t, dir, "CREATE VIEW sqliteV AS SELECT * FROM Payments")
	}
	index := func(t *testing.T, dir string) string {
		return altered(t, dir, "CREATE INDEX sqlite1dx ON Payments(Amount)")
	}
	runHostile(t, "database", []hostileCase{
		{name: "run --db FILE: leaselab's tables plus the user's table SqliteUserData", setup: at(userTable, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "it has a table SqliteUserData, which leaselab does not create", unchanged: true},
		{name: "seed --reset --db FILE: leaselab's tables plus the user's table sqlitebackup", setup: at(backup, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "it has a table sqlitebackup, which leaselab does not create", unchanged: true},
		{name: "seed --reset --db FILE: leaselab's tables plus a trigger sqliteAudit", setup: at(onlyTrigger, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "it has a trigger sqliteAudit, which leaselab does not create", unchanged: true},
		{name: "run --reset --db FILE: a table UserRows and a trigger sqliteAudit", setup: at(trigger, "run", "after", "--reset", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "not a leaselab database", unchanged: true},
		{name: "run --reset --db FILE: leaselab's tables plus a view sqliteV", setup: at(view, "run", "after", "--reset", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "it has a view sqliteV, which leaselab does not create", unchanged: true},
		{name: "seed --reset --db FILE: leaselab's tables plus an index sqlite1dx", setup: at(index, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "it has an index sqlite1dx, which leaselab does not create", unchanged: true},
		{name: "watch --db FILE: leaselab's tables plus a view sqliteV", setup: at(view, "watch", "--db", "FILE"),
			code: exitEnvError, msg: "it has a view sqliteV", unchanged: true},
	})
}
