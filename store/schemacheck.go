package store

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"leaselab/store/internal/shared"
)

// A file is leaselab's when its schema is, object by object and column by column, what one of
// leaselab's versions creates: its application_id and user_version alone prove nothing, since
// any program can write them. The schemas of the versions still recognised are kept here, and
// each is compared with the file by building it in an in-memory database and reading both with
// the same pragmas.

//go:embed schema_v1.sql
var schemaV1SQL string

// knownSchemas are the schemas of every version leaselab recognises, by PRAGMA user_version.
// Create rebuilds an older one; nothing else is ever changed.
var knownSchemas = map[int]string{
	1:             schemaV1SQL,
	2:             derive(derive(derive(schemaV5SQL, v5ToV4), v4ToV3), v3ToV2),
	3:             derive(derive(schemaV5SQL, v5ToV4), v4ToV3),
	4:             derive(schemaV5SQL, v5ToV4),
	5:             schemaV5SQL,
	schemaVersion: schemaSQL,
}

// schemaV5SQL is schema 5, from which the older ones are derived.
var schemaV5SQL = derive(schemaSQL, v6ToV5)

// An edit undoes one version's change to the schema: the text of the newer version (from) and
// what the older one has in its place (to).
type edit struct{ from, to string }

// v6ToV5 undoes schema 6: schema 5 kept four claim indexes, each keyed by Status, so that a claim
// moved a row in or out of three of them (four pages a claim, with the row's); its Status CHECK
// was one IN of four words, which SQLite checks against a table it builds on every UPDATE that
// sets Status; and nothing tied LockedUntilUtc to Processing.
var v6ToV5 = []edit{{
	from: `                   CHECK (Status IN ('Pending', 'Processing') OR Status IN ('Processed', 'DeadLettered')),`,
	to:   `                   CHECK (Status IN ('Pending', 'Processing', 'Processed', 'DeadLettered')),`,
}, {
	from: `    CHECK ((Status IN ('Processed', 'DeadLettered')) = (ProcessedAtUtc IS NOT NULL)),
    -- A row has a lease end exactly while it is Processing: OutboxMessages_Queue relies on it.
    CHECK ((Status = 'Processing') = (LockedUntilUtc IS NOT NULL))
);`,
	to: `    CHECK ((Status IN ('Processed', 'DeadLettered')) = (ProcessedAtUtc IS NOT NULL))
);`,
}, {
	from: `-- The claim's index. The claim takes the oldest claimable row: the oldest Pending row, or the
-- oldest row whose lease has ended, whichever is older; a due claim (retry backoff on) takes a
-- Pending row only once it never failed or its backoff is over. One index holds every unfinished
-- row by what it waits for: a lease by the instant it ends (LockedUntilUtc), a Pending row by the
-- end of its backoff (NextAttemptUtc; none for a row that never failed, and those come first),
-- then in claim order. The leases come first (Status DESC), so the newest lease sits next to the
-- oldest Pending row: a claim moves a row's entry from one side of that boundary to the other,
-- usually within one page, and a finalize takes it out. A claim reads the first entries of the
-- Pending rows that never failed and of the ended leases, and never walks the live leases (a
-- crashed worker's row stays Processing until its lease ends; a run with many crashes and a clock
-- that does not move holds thousands), nor the rows still waiting for their backoff to end. The
-- reads name the index's expression, coalesce(LockedUntilUtc, NextAttemptUtc), as it stands here.
CREATE INDEX OutboxMessages_Queue
    ON OutboxMessages (Status DESC, coalesce(LockedUntilUtc, NextAttemptUtc), CreatedAtUtc)
 WHERE ProcessedAtUtc IS NULL;

-- The Pending rows that failed, in claim order: what a claim that does not honour the backoff
-- reads besides the rows that never failed. A row that never failed is never in it, so a claim
-- and a finalize of one leave it alone.
CREATE INDEX OutboxMessages_Retried
    ON OutboxMessages (CreatedAtUtc) WHERE Status = 'Pending' AND NextAttemptUtc IS NOT NULL;

`,
	to: `-- The claim's two indexes. The claim takes the oldest claimable row: the oldest Pending row, or
-- the oldest row whose lease has ended, whichever is older. Pending rows are kept in claim order,
-- so the oldest is the first entry. Leases are kept in the order they end, then claim order: the
-- ended ones come first, and the first entry of each instant is the oldest row whose lease ended
-- then. So a claim reads a few entries whatever the backlog, and never walks the live leases
-- (a crashed worker's row stays Processing until its lease ends; a run with many crashes and a
-- clock that does not move holds thousands).
CREATE INDEX OutboxMessages_Pending
    ON OutboxMessages (CreatedAtUtc) WHERE Status = 'Pending';
CREATE INDEX OutboxMessages_Leases
    ON OutboxMessages (LockedUntilUtc, CreatedAtUtc) WHERE Status = 'Processing';

-- The due claim's two indexes (retry backoff on). A due claim takes the oldest row it may: the
-- oldest Pending row that never failed, the oldest whose backoff is over, or the oldest ended
-- lease. Pending rows that never failed are kept in claim order, apart from the rows that
-- failed, which are kept in the order their backoff ends: so a due claim reads the first entry
-- of the one and the rows whose backoff is over of the other, and never walks the rows still
-- waiting for their next attempt, however many there are.
CREATE INDEX OutboxMessages_Fresh
    ON OutboxMessages (CreatedAtUtc) WHERE Status = 'Pending' AND NextAttemptUtc IS NULL;
CREATE INDEX OutboxMessages_Backoff
    ON OutboxMessages (NextAttemptUtc, CreatedAtUtc) WHERE Status = 'Pending' AND NextAttemptUtc IS NOT NULL;

`,
}}

// v5ToV4 undoes schema 5: schema 4 had no index of its own for the due claim, which walked
// OutboxMessages_Pending in claim order past every row still in its backoff.
var v5ToV4 = []edit{{from: `-- The due claim's two indexes (retry backoff on). A due claim takes the oldest row it may: the
-- oldest Pending row that never failed, the oldest whose backoff is over, or the oldest ended
-- lease. Pending rows that never failed are kept in claim order, apart from the rows that
-- failed, which are kept in the order their backoff ends: so a due claim reads the first entry
-- of the one and the rows whose backoff is over of the other, and never walks the rows still
-- waiting for their next attempt, however many there are.
CREATE INDEX OutboxMessages_Fresh
    ON OutboxMessages (CreatedAtUtc) WHERE Status = 'Pending' AND NextAttemptUtc IS NULL;
CREATE INDEX OutboxMessages_Backoff
    ON OutboxMessages (NextAttemptUtc, CreatedAtUtc) WHERE Status = 'Pending' AND NextAttemptUtc IS NOT NULL;

`, to: ""}}

// v4ToV3 undoes schema 4: schema 3 had no dead letters and no failed attempts (no
// NextAttemptUtc, no LastError), and only a Processed row had a ProcessedAtUtc.
var v4ToV3 = []edit{{
	from: `                   CHECK (Status IN ('Pending', 'Processing', 'Processed', 'DeadLettered')),
    CreatedAtUtc   TEXT    NOT NULL,`,
	to: `                   CHECK (Status IN ('Pending', 'Processing', 'Processed')),
    CreatedAtUtc   TEXT    NOT NULL,`,
}, {
	from: `    LeaseVersion   INTEGER NOT NULL DEFAULT 0,  -- +1 on every claim: the fencing token
    NextAttemptUtc TEXT    NULL,                -- after a failed attempt: not claimable before this
    LastError      TEXT    NULL,                -- what the last failed attempt failed with
    -- A row is finished, out of every claim's way, exactly when it has a ProcessedAtUtc:
    -- Processed, or parked as a dead letter (DeadLettered, after its last allowed attempt).
    CHECK ((Status IN ('Processed', 'DeadLettered')) = (ProcessedAtUtc IS NOT NULL))`,
	to: `    LeaseVersion   INTEGER NOT NULL DEFAULT 0,  -- +1 on every claim: the fencing token
    -- A row is finished exactly when it has a ProcessedAtUtc: the claim's index relies on it.
    CHECK ((Status = 'Processed') = (ProcessedAtUtc IS NOT NULL))`,
}}

// v3ToV2 undoes schema 3: schema 2 had one claim index, over unfinished rows, where schema 3 has
// two, of Pending rows and of leases.
var v3ToV2 = []edit{{
	from: `-- The claim's two indexes. The claim takes the oldest claimable row: the oldest Pending row, or
-- the oldest row whose lease has ended, whichever is older. Pending rows are kept in claim order,
-- so the oldest is the first entry. Leases are kept in the order they end, then claim order: the
-- ended ones come first, and the first entry of each instant is the oldest row whose lease ended
-- then. So a claim reads a few entries whatever the backlog, and never walks the live leases
-- (a crashed worker's row stays Processing until its lease ends; a run with many crashes and a
-- clock that does not move holds thousands).
CREATE INDEX OutboxMessages_Pending
    ON OutboxMessages (CreatedAtUtc) WHERE Status = 'Pending';
CREATE INDEX OutboxMessages_Leases
    ON OutboxMessages (LockedUntilUtc, CreatedAtUtc) WHERE Status = 'Processing';

`,
	to: `-- The claim's index: a partial index over unfinished rows, in claim order. The claim's WHERE
-- repeats this index's condition word for word, so SQLite walks it in order and stops at the
-- first claimable row, whatever the backlog. The condition is on ProcessedAtUtc, not Status:
-- the claim changes Status (Pending -> Processing) but neither column of this index, so SQLite
-- leaves the index alone and a claim writes one page (the row's), not two. Only the finalize,
-- which sets ProcessedAtUtc, takes the row out of the index.
CREATE INDEX OutboxMessages_Claimable
    ON OutboxMessages (CreatedAtUtc) WHERE ProcessedAtUtc IS NULL;

`,
}}

// derive is schema with edits applied, in order: an older version's schema, written as what
// differs from the newer one. Each edit's from must stand in schema exactly once; an edit that no
// longer finds its text is a schema.sql changed without its edits, and panics (at start, in
// every test of this package).
func derive(schema string, edits []edit) string {
	for _, e := range edits {
		if n := strings.Count(schema, e.from); n != 1 {
			panic(fmt.Sprintf("store: deriving an older schema: the text to undo stands %d times in the newer one, want once:\n%s", n, e.from))
		}
		schema = strings.Replace(schema, e.from, e.to, 1)
	}
	return schema
}

// querier is what reading a schema needs: a *sql.DB, *sql.Conn or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// schemaFact is one thing a schema says: key names it ("column OutboxMessages.LockedBy"), value
// is what it is ("TEXT NULL").
type schemaFact struct{ key, value string }

// readSchema describes every object of q's main database as facts, in a fixed order: the
// objects, their columns, indexes and foreign keys, then each object's definition (which holds
// what no pragma shows: CHECK constraints and a partial index's condition).
func readSchema(ctx context.Context, q querier) ([]schemaFact, error) {
	type object struct{ typ, name, table, sql string }
	var objs []object
	err := scan(ctx, q, func(r *sql.Rows) error {
		var o object
		var def sql.NullString
		err := r.Scan(&o.typ, &o.name, &o.table, &def)
		o.sql = def.String
		objs = append(objs, o)
		return err
	}, `SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE `+notInternal+` ORDER BY type, name`)
	if err != nil {
		return nil, err
	}
	var facts, defs []schemaFact
	add := func(key, format string, args ...any) {
		facts = append(facts, schemaFact{key, fmt.Sprintf(format, args...)})
	}
	for _, o := range objs {
		if o.typ != "index" { // indexes, automatic ones too, come from pragma_index_list below
			add(o.typ+" "+o.name, "on %s", o.table)
		}
		if o.sql != "" {
			defs = append(defs, schemaFact{"the definition of " + o.typ + " " + o.name, normalizeSQL(o.sql)})
		}
		if o.typ != "table" {
			continue
		}
		err := scan(ctx, q, func(r *sql.Rows) error {
			var cid, notNull, pk, hidden int
			var name, typ string
			var dflt sql.NullString
			err := r.Scan(&cid, &name, &typ, &notNull, &dflt, &pk, &hidden)
			add(fmt.Sprintf("column %s.%s", o.name, name), "%s notnull=%d default=%s pk=%d hidden=%d position=%d",
				typ, notNull, dflt.String, pk, hidden, cid)
			return err
		}, `SELECT cid, name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?)`, o.name)
		if err != nil {
			return nil, err
		}
		err = scan(ctx, q, func(r *sql.Rows) error {
			var id, seq int
			var table, from, onUpdate, onDelete, match string
			var to sql.NullString
			err := r.Scan(&id, &seq, &table, &from, &to, &onUpdate, &onDelete, &match)
			add(fmt.Sprintf("foreign key %s.%s", o.name, from), "references %s(%s) on update %s on delete %s",
				table, to.String, onUpdate, onDelete)
			return err
		}, `SELECT id, seq, "table", "from", "to", on_update, on_delete, match FROM pragma_foreign_key_list(?)`, o.name)
		if err != nil {
			return nil, err
		}
		err = scan(ctx, q, func(r *sql.Rows) error {
			var seq, unique, partial int
			var name, origin string
			err := r.Scan(&seq, &name, &unique, &origin, &partial)
			add("index "+name, "on %s unique=%d origin=%s partial=%d", o.name, unique, origin, partial)
			return err
		}, `SELECT seq, name, "unique", origin, partial FROM pragma_index_list(?)`, o.name)
		if err != nil {
			return nil, err
		}
	}
	return append(facts, defs...), nil
}

// notInternal is the condition that leaves out SQLite's own objects and nothing else: the
// tables it makes itself (sqlite_sequence for AUTOINCREMENT, sqlite_stat1 to 4 for ANALYZE) and
// the indexes it makes for a UNIQUE or PRIMARY KEY constraint (sqlite_autoindex_…, which have
// no SQL of their own). The prefix "sqlite_" alone is not enough: SQLite reserves it for CREATE,
// but PRAGMA writable_schema writes any name, and a user's table or trigger named sqlite_… went
// unseen, so that a file holding a trigger on OutboxMessages was reset and seeded and the
// trigger fired on every write. LIKE 'sqlite_%' would not do either: in LIKE "_" is any
// character and case is ignored, so a user's table SqliteUserData would go unseen too.
const notInternal = `NOT ((type = 'table' AND name IN ('sqlite_sequence', 'sqlite_stat1', 'sqlite_stat2', 'sqlite_stat3', 'sqlite_stat4'))` +
	` OR (type = 'index' AND substr(name, 1, 17) IS 'sqlite_autoindex_' AND sql IS NULL))`

// scan runs query on q and calls each for every row.
func scan(ctx context.Context, q querier, each func(*sql.Rows) error, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return describe(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return describe(err)
		}
	}
	if err := rows.Err(); err != nil {
		return describe(err)
	}
	return nil
}

// normalizeSQL drops comments and folds white space and case outside quotes, so that a change to
// schema.sql's comments does not make older files unrecognisable.
func normalizeSQL(s string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			b.WriteString(s[i : i+end+2]) // the quote, as it is
			i += end + 1
			space = false
			continue
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			space = true
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
			continue
		}
		if space && b.Len() > 0 && isWord(c) && isWord(b.String()[b.Len()-1]) {
			b.WriteByte(' ')
		}
		space = false
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// schemaOf builds the schema of a known version in a private in-memory database and reads it.
func schemaOf(ctx context.Context, version int) ([]schemaFact, error) {
	mem, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	mem.SetMaxOpenConns(1) // every connection to :memory: is a database of its own
	if _, err := mem.ExecContext(ctx, knownSchemas[version]); err != nil {
		return nil, fmt.Errorf("build schema %d: %w", version, err)
	}
	return readSchema(ctx, mem)
}

// recognize returns the version whose schema the facts are exactly, or 0 and what differs from
// the nearest version's (the one with the fewest differences, this version's on a tie).
func recognize(ctx context.Context, got []schemaFact) (version int, diff string, err error) {
	best, bestDiff := 0, ""
	for _, v := range []int{schemaVersion, 5, 4, 3, 2, 1} {
		want, err := schemaOf(ctx, v)
		if err != nil {
			return 0, "", err
		}
		n, first := compareSchemas(want, got)
		if n == 0 {
			return v, "", nil
		}
		if best == 0 || n < best {
			best, bestDiff = n, first
		}
	}
	return 0, bestDiff, nil
}

// compareSchemas counts the facts that differ between want and got and says the first in words.
func compareSchemas(want, got []schemaFact) (int, string) {
	kv := func(f schemaFact) (string, string) { return f.key, f.value }
	w, g := shared.Index(want, kv), shared.Index(got, kv)
	var diffs []string
	for _, f := range want {
		gv, ok := g[f.key]
		switch {
		case !ok:
			diffs = append(diffs, "it has no "+f.key)
		case gv != f.value && strings.HasPrefix(f.key, "the definition"):
			diffs = append(diffs, f.key+" differs from leaselab's")
		case gv != f.value:
			diffs = append(diffs, fmt.Sprintf("its %s is %q, leaselab's is %q", f.key, gv, f.value))
		}
	}
	for _, f := range got {
		if _, ok := w[f.key]; !ok {
			article := "a "
			if strings.HasPrefix(f.key, "index") {
				article = "an "
			}
			diffs = append(diffs, "it has "+article+f.key+", which leaselab does not create")
		}
	}
	if len(diffs) == 0 {
		return 0, ""
	}
	if !slices.ContainsFunc(want, func(f schemaFact) bool { _, ok := g[f.key]; return strings.HasPrefix(f.key, "table ") && ok }) {
		return len(diffs), "it has none of leaselab's tables"
	}
	// Report the first difference that is not just a changed definition: it says more.
	first := slices.IndexFunc(diffs, func(d string) bool { return !strings.Contains(d, "the definition") })
	if first < 0 {
		first = 0
	}
	return len(diffs), diffs[first]
}
