package store

// Copies of the whole database and the way back to one, for engine/explore, which restores a
// state it has seen before it tries the state's next transitions: in memory (SQLite's
// serialize and deserialize, then the backup API into the file) or through a file (VACUUM
// INTO, then the backup API from it). Every worker connection sees the restored rows, as it
// sees another connection's commit.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"modernc.org/sqlite"

	"leaselab/engine"
)

// serializer is what modernc.org/sqlite's driver connection offers.
type serializer interface {
	Serialize() ([]byte, error)
	Deserialize(buf []byte) error
}

// backuper is the driver connection's backup API.
type backuper interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
}

// Serialize returns a copy of the whole database as SQLite serializes it: the pages of the
// file, the write-ahead log's committed frames included, marked as a rollback-journal database
// (a copy in memory has no write-ahead log).
func (db *DB) Serialize(ctx context.Context) ([]byte, error) {
	var img []byte
	err := db.raw(ctx, db.admin, func(dc any) error {
		s, ok := dc.(serializer)
		if !ok {
			return fmt.Errorf("serialize: the driver cannot (%T)", dc)
		}
		var err error
		img, err = s.Serialize()
		return err
	})
	if err == nil && len(img) >= 100 {
		// Bytes 18 and 19 of the header say WAL (2): a database in memory has no -wal file to
		// open, and would refuse to be read. The copy says rollback journal (1); the backup
		// into the file sets them back to WAL, as it does for every WAL destination.
		img[18], img[19] = 1, 1
	}
	if err != nil {
		return nil, &EnvError{Path: db.path, Err: fmt.Errorf("serialize: %w", describe(err))}
	}
	return img, nil
}

// Deserialize makes the database what img, from Serialize, holds: img is loaded into a
// connection of its own in memory, and SQLite's backup API copies it over the file in one
// write transaction.
func (db *DB) Deserialize(ctx context.Context, img []byte) error {
	if db.scratch == nil {
		s, err := sql.Open("sqlite", "file::memory:")
		if err != nil {
			return &EnvError{Path: db.path, Err: err}
		}
		s.SetMaxOpenConns(1)
		s.SetMaxIdleConns(1)
		s.SetConnMaxLifetime(0)
		db.scratch = s
	}
	err := db.raw(ctx, db.scratch, func(dc any) error {
		s, ok := dc.(serializer)
		if !ok {
			return fmt.Errorf("the driver cannot deserialize (%T)", dc)
		}
		if err := s.Deserialize(img); err != nil {
			return err
		}
		return copyTo(dc, dsn(db.path, true))
	})
	if err != nil {
		return &EnvError{Path: db.path, Err: fmt.Errorf("deserialize: %w", describe(err))}
	}
	return nil
}

// VacuumInto writes a copy of the database to the new file path (VACUUM INTO).
func (db *DB) VacuumInto(ctx context.Context, path string) error {
	if _, err := db.admin.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return &EnvError{Path: db.path, Err: fmt.Errorf("vacuum into %s: %w", path, describe(err))}
	}
	return nil
}

// RestoreFrom makes the database what the file path, from VacuumInto, holds: SQLite's backup
// API copies it over the file in one write transaction.
func (db *DB) RestoreFrom(ctx context.Context, path string) error {
	src, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path}).String()+"?mode=ro")
	if err != nil {
		return &EnvError{Path: db.path, Err: err}
	}
	defer src.Close()
	err = db.raw(ctx, src, func(dc any) error { return copyTo(dc, dsn(db.path, true)) })
	if err != nil {
		return &EnvError{Path: db.path, Err: fmt.Errorf("restore from %s: %w", path, describe(err))}
	}
	return nil
}

// copyTo copies the database of driver connection dc over the database at dst, whole.
func copyTo(dc any, dst string) error {
	bk, ok := dc.(backuper)
	if !ok {
		return fmt.Errorf("the driver has no backup API (%T)", dc)
	}
	b, err := bk.NewBackup(dst)
	if err != nil {
		return err
	}
	if _, err := b.Step(-1); err != nil {
		b.Finish()
		return err
	}
	return b.Finish()
}

// raw runs fn on one driver connection of pool.
func (db *DB) raw(ctx context.Context, pool *sql.DB, fn func(dc any) error) error {
	c, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(fn)
}

// Rows is every row of both tables, column by column as the database holds them: a copy that
// LoadRows puts back with DELETEs and INSERTs, leaving the schema (and so every connection's
// prepared statements) as it is.
type Rows struct {
	payments, outbox [][]any
	cols             [2][]string // each table's columns, as SELECT * gave them
	idx              [2]map[string]int
}

// copiedTables are the tables Rows copies, in the order LoadRows inserts them (a message
// refers to its payment).
var copiedTables = [...]string{"Payments", "OutboxMessages"}

// DumpRows copies every row of both tables.
func (db *DB) DumpRows(ctx context.Context) (any, error) {
	var r Rows
	for i, table := range copiedTables {
		rows, err := db.query(ctx, `SELECT * FROM `+table+` ORDER BY Id`)
		if err != nil {
			return nil, &EnvError{Path: db.path, Err: fmt.Errorf("dump %s: %w", table, describe(err))}
		}
		cols, err := rows.Columns()
		var all [][]any
		for err == nil && rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for j := range vals {
				ptrs[j] = &vals[j]
			}
			err = rows.Scan(ptrs...)
			all = append(all, vals)
		}
		err = errors.Join(err, rows.Err(), rows.Close())
		if err != nil {
			return nil, &EnvError{Path: db.path, Err: fmt.Errorf("dump %s: %w", table, describe(err))}
		}
		r.cols[i] = cols
		if i == 0 {
			r.payments = all
		} else {
			r.outbox = all
		}
	}
	return &r, nil
}

// LoadRows makes both tables hold exactly the rows of copy (from DumpRows), in one write
// transaction: the messages and the payments deleted, then inserted again, column by column.
func (db *DB) LoadRows(ctx context.Context, copy any) error {
	r, ok := copy.(*Rows)
	if !ok {
		return fmt.Errorf("load rows: not a copy of this store's rows (%T)", copy)
	}
	var stmts []*sql.Stmt
	for _, q := range []string{`DELETE FROM OutboxMessages`, `DELETE FROM Payments`} {
		st, err := db.prepared(ctx, q)
		if err != nil {
			return &EnvError{Path: db.path, Err: fmt.Errorf("load rows: %w", describe(err))}
		}
		stmts = append(stmts, st)
	}
	var inserts [][]any
	for i, rows := range [][][]any{r.payments, r.outbox} {
		if len(rows) == 0 {
			continue
		}
		// One INSERT of every row, prepared once for its number of rows.
		one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(rows[0])), ",") + ")"
		args := make([]any, 0, len(rows)*len(rows[0]))
		for _, vals := range rows {
			args = append(args, vals...)
		}
		st, err := db.prepared(ctx, `INSERT INTO `+copiedTables[i]+` VALUES `+strings.TrimSuffix(strings.Repeat(one+",", len(rows)), ","))
		if err != nil {
			return &EnvError{Path: db.path, Err: fmt.Errorf("load rows: %w", describe(err))}
		}
		stmts, inserts = append(stmts, st), append(inserts, args)
	}
	args := make([][]any, 2, len(stmts))
	return db.execAll(ctx, stmts, append(args, inserts...))
}

// prepared is statement q prepared on the admin pool, once for the DB's life.
func (db *DB) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	db.stmtsMu.Lock()
	defer db.stmtsMu.Unlock()
	if st, ok := db.stmts[q]; ok {
		return st, nil
	}
	st, err := db.admin.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if db.stmts == nil {
		db.stmts = map[string]*sql.Stmt{}
	}
	db.stmts[q] = st
	return st, nil
}

// LoadRowsOver is LoadRows for a database known to hold exactly the rows of from (an earlier
// DumpRows): only the rows that differ are written, one UPDATE each, in one write transaction.
// Copies whose rows are not the same ids in the same order are loaded whole.
func (db *DB) LoadRowsOver(ctx context.Context, from, to any) error {
	a, okA := from.(*Rows)
	b, okB := to.(*Rows)
	if !okA || !okB || !slices.Equal(a.cols[0], b.cols[0]) || !slices.Equal(a.cols[1], b.cols[1]) ||
		len(b.cols[0]) == 0 || len(b.cols[1]) == 0 || !sameIDs(a.payments, b.payments) || !sameIDs(a.outbox, b.outbox) {
		return db.LoadRows(ctx, to)
	}
	type change struct {
		table int
		vals  []any
	}
	var changes []change
	for t, pair := range [][2][][]any{{a.payments, b.payments}, {a.outbox, b.outbox}} {
		for i := range pair[1] {
			if !sameRow(pair[0][i], pair[1][i]) {
				changes = append(changes, change{t, pair[1][i]})
			}
		}
	}
	if len(changes) == 0 {
		return nil
	}
	var stmts []*sql.Stmt
	var args [][]any
	for _, c := range changes {
		st, err := db.prepared(ctx, updateSQL(copiedTables[c.table], b.cols[c.table]))
		if err != nil {
			return &EnvError{Path: db.path, Err: fmt.Errorf("load rows: %w", describe(err))}
		}
		// The columns in table order, Id first: SET every column but Id, WHERE Id.
		stmts, args = append(stmts, st), append(args, append(append([]any{}, c.vals[1:]...), c.vals[0]))
	}
	return db.execAll(ctx, stmts, args)
}

// execAll runs each prepared statement with its arguments, in one write transaction.
func (db *DB) execAll(ctx context.Context, stmts []*sql.Stmt, args [][]any) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for i, st := range stmts {
			if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, args[i]...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return &EnvError{Path: db.path, Err: fmt.Errorf("load rows: %w", describe(err))}
	}
	return nil
}

// updateSQL is the UPDATE of every column of a table's row but the first (Id), by Id.
func updateSQL(table string, cols []string) string {
	set := make([]string, 0, len(cols))
	for _, c := range cols[1:] {
		set = append(set, `"`+c+`" = ?`)
	}
	return "UPDATE " + table + " SET " + strings.Join(set, ", ") + ` WHERE "` + cols[0] + `" = ?`
}

// sameIDs reports whether two copies of a table hold the same ids in the same order.
func sameIDs(a, b [][]any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) == 0 || len(b[i]) == 0 || a[i][0] != b[i][0] {
			return false
		}
	}
	return true
}

// sameRow reports whether two copies of a row hold the same values.
func sameRow(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, isBytes := a[i].([]byte)
		if y, ok := b[i].([]byte); isBytes || ok {
			if !isBytes || !ok || string(x) != string(y) {
				return false
			}
			continue
		}
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// What a search reads of a state, from one copy of its rows (explore's StateRows): the rows'
// view, the counts, the transaction ids and the retry columns, each as its own statement reads
// it (Snapshot, Counts, EachTransactionID, RetryStates), without asking the database again.

// col is the value of column name of row vals of table t, nil when it is NULL or not there.
func (r *Rows) col(t int, vals []any, name string) any {
	if r.idx[t] == nil {
		r.idx[t] = map[string]int{}
		for i, c := range r.cols[t] {
			r.idx[t][strings.ToLower(c)] = i
		}
	}
	if i, ok := r.idx[t][name]; ok && i < len(vals) { // name: lower case
		return vals[i]
	}
	return nil
}

// text is a TEXT value as a string ("" for NULL).
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

// integer is an INTEGER value (0 for NULL).
func integer(v any) int64 {
	if x, ok := v.(int64); ok {
		return x
	}
	return 0
}

// table returns the rows of Payments (0) or OutboxMessages (1).
func (r *Rows) table(t int) [][]any {
	if t == 0 {
		return r.payments
	}
	return r.outbox
}

// Snapshot is the rows' view Snapshot reads: every message, in Id order, with its payment.
func (r *Rows) Snapshot() []engine.Row {
	pay := map[string][]any{}
	for _, p := range r.payments {
		pay[text(r.col(0, p, "idempotencykey"))] = p
	}
	out := make([]engine.Row, 0, len(r.outbox))
	for _, o := range r.outbox {
		row := engine.Row{ID: integer(r.col(1, o, "id")), IdempotencyKey: text(r.col(1, o, "idempotencykey")),
			Status: text(r.col(1, o, "status")), LockedBy: text(r.col(1, o, "lockedby")),
			Attempts: integer(r.col(1, o, "attempts")), LeaseVersion: integer(r.col(1, o, "leaseversion"))}
		row.CreatedAt, _ = ParseTime(text(r.col(1, o, "createdatutc")))
		row.ProcessedAt, _ = ParseTime(text(r.col(1, o, "processedatutc")))
		row.LockedUntil, _ = ParseTime(text(r.col(1, o, "lockeduntilutc")))
		if p, ok := pay[row.IdempotencyKey]; ok {
			row.PaymentStatus, row.TransactionID = text(r.col(0, p, "paymentstatus")), text(r.col(0, p, "transactionid"))
			row.Amount = integer(r.col(0, p, "amount"))
		}
		out = append(out, row)
	}
	return out
}

// Counts are the counts Counts reads.
func (r *Rows) Counts() engine.Counts {
	var c engine.Counts
	c.Messages = len(r.outbox)
	for _, o := range r.outbox {
		switch text(r.col(1, o, "status")) {
		case engine.StatusPending:
			c.OutboxPending++
		case engine.StatusProcessing:
			c.OutboxProcessing++
		case engine.StatusProcessed:
			c.OutboxProcessed++
		case engine.StatusDeadLettered:
			c.OutboxDeadLettered++
		}
	}
	for _, p := range r.payments {
		hasTx := r.col(0, p, "transactionid") != nil
		switch text(r.col(0, p, "paymentstatus")) {
		case engine.PaymentPending:
			c.PaymentsPending++
		case engine.PaymentPaid:
			c.PaymentsPaid++
			if hasTx {
				c.PaidWithTxID++
			}
		case engine.PaymentFailed:
			c.PaymentsFailed++
			if hasTx {
				c.FailedWithTxID++
			}
		}
	}
	for t, max := range []*int{&c.MaxPaymentsPerKey, &c.MaxOutboxPerKey} {
		per := map[string]int{}
		for _, v := range r.table(t) {
			k := text(r.col(t, v, "idempotencykey"))
			per[k]++
			*max = maxInt(*max, per[k])
		}
		c.DuplicateRows += len(r.table(t)) - len(per)
	}
	return c
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// EachTransactionID calls fn with every payment's key and TransactionId ("" when NULL), in Id
// order, as EachTransactionID reads them.
func (r *Rows) EachTransactionID(fn func(key, id string) error) error {
	for _, p := range r.payments {
		if err := fn(text(r.col(0, p, "idempotencykey")), text(r.col(0, p, "transactionid"))); err != nil {
			return err
		}
	}
	return nil
}

// RetryStates are the retry columns RetryStates reads, in Id order.
func (r *Rows) RetryStates() []engine.RetryState {
	out := make([]engine.RetryState, 0, len(r.outbox))
	for _, o := range r.outbox {
		st := engine.RetryState{Status: text(r.col(1, o, "status")), Attempts: integer(r.col(1, o, "attempts")),
			LastError: text(r.col(1, o, "lasterror"))}
		st.NextAttempt, _ = ParseTime(text(r.col(1, o, "nextattemptutc")))
		out = append(out, st)
	}
	return out
}
