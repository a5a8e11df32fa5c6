package postgres

// Copies of a schema's rows and the way back to one, for engine/explore, which restores a state
// it has seen before it tries the state's next moves (explore.RowCopies, RowDiffs and
// RetryColumns). A schema is copied by its rows: both tables read in Id order, put back in one
// transaction (the rows that differ from the copy the schema holds, or all of them).

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"leaselab/engine"
)

// Rows is every row of both tables, column by column as the server returned them.
type Rows struct {
	tables [2][][]any
	cols   [2][]string
}

// copiedTables are the tables Rows copies, in the order LoadRows inserts them (a message
// refers to its payment).
var copiedTables = [...]string{"Payments", "OutboxMessages"}

// DumpRows copies every row of both tables, in one transaction (one snapshot).
func (db *DB) DumpRows(ctx context.Context) (any, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	var r Rows
	err := pgx.BeginFunc(ctx, db.admin, func(tx pgx.Tx) error {
		for i, table := range copiedTables {
			rows, err := tx.Query(ctx, `SELECT * FROM `+table+` ORDER BY Id`)
			if err != nil {
				return err
			}
			for _, f := range rows.FieldDescriptions() {
				r.cols[i] = append(r.cols[i], f.Name)
			}
			for rows.Next() {
				vals, err := rows.Values()
				if err != nil {
					rows.Close()
					return err
				}
				r.tables[i] = append(r.tables[i], vals)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, envError(db.t, fmt.Errorf("dump rows: %w", describe(err)))
	}
	return &r, nil
}

// LoadRows makes both tables hold exactly the rows of copy (from DumpRows), in one
// transaction: the messages and the payments deleted, then inserted again.
func (db *DB) LoadRows(ctx context.Context, copy any) error {
	r, ok := copy.(*Rows)
	if !ok {
		return fmt.Errorf("load rows: not a copy of this store's rows (%T)", copy)
	}
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM OutboxMessages`)
	b.Queue(`DELETE FROM Payments`)
	for i, rows := range r.tables {
		if len(rows) == 0 {
			continue
		}
		var q strings.Builder
		var args []any
		fmt.Fprintf(&q, `INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE VALUES `, copiedTables[i], strings.Join(r.cols[i], ", "))
		for k, vals := range rows {
			if k > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(")
			for c := range vals {
				if c > 0 {
					q.WriteString(", ")
				}
				args = append(args, vals[c])
				fmt.Fprintf(&q, "$%d", len(args))
			}
			q.WriteString(")")
		}
		b.Queue(q.String(), args...)
	}
	return db.sendBatch(ctx, b)
}

// LoadRowsOver is LoadRows for a schema known to hold exactly the rows of from (an earlier
// DumpRows): only the rows that differ are written, one UPDATE each, in one transaction.
// Copies whose rows are not the same ids in the same order are loaded whole.
func (db *DB) LoadRowsOver(ctx context.Context, from, to any) error {
	a, okA := from.(*Rows)
	b, okB := to.(*Rows)
	if !okA || !okB || !reflect.DeepEqual(a.cols, b.cols) || len(b.cols[0]) == 0 || len(b.cols[1]) == 0 {
		return db.LoadRows(ctx, to)
	}
	batch := &pgx.Batch{}
	for t := range copiedTables {
		if len(a.tables[t]) != len(b.tables[t]) {
			return db.LoadRows(ctx, to)
		}
		for i, row := range b.tables[t] {
			old := a.tables[t][i]
			if len(old) == 0 || len(row) == 0 || !reflect.DeepEqual(old[0], row[0]) {
				return db.LoadRows(ctx, to)
			}
			if sameValues(old, row) {
				continue
			}
			set := make([]string, 0, len(row)-1)
			for c, name := range b.cols[t][1:] {
				set = append(set, fmt.Sprintf("%s = $%d", name, c+1))
			}
			args := append(append([]any{}, row[1:]...), row[0])
			batch.Queue(fmt.Sprintf(`UPDATE %s SET %s WHERE %s = $%d`, copiedTables[t], strings.Join(set, ", "), b.cols[t][0], len(row)), args...)
		}
	}
	if batch.Len() == 0 {
		return nil
	}
	return db.sendBatch(ctx, batch)
}

// sameValues reports whether two copies of a row hold the same values.
func sameValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ta, okA := a[i].(time.Time)
		tb, okB := b[i].(time.Time)
		if okA || okB {
			if !okA || !okB || !ta.Equal(tb) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sendBatch runs the batch's statements in one transaction.
func (db *DB) sendBatch(ctx context.Context, b *pgx.Batch) error {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, db.admin, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
	if err != nil {
		return envError(db.t, fmt.Errorf("load rows: %w", describe(err)))
	}
	return nil
}

// RetryStates reads what failed attempts left on every message, in Id order, in one statement
// (explore.RetryColumns: the columns a state key needs that engine.Row leaves out).
func (db *DB) RetryStates(ctx context.Context) ([]engine.RetryState, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	rows, err := db.admin.Query(ctx, `SELECT Status, Attempts, NextAttemptUtc, LastError FROM OutboxMessages ORDER BY Id`)
	if err != nil {
		return nil, fmt.Errorf("retry states: %w", describe(err))
	}
	defer rows.Close()
	var out []engine.RetryState
	for rows.Next() {
		var st engine.RetryState
		var next *time.Time
		var lastErr *string
		if err := rows.Scan(&st.Status, &st.Attempts, &next, &lastErr); err != nil {
			return nil, fmt.Errorf("retry states: %w", describe(err))
		}
		if next != nil {
			st.NextAttempt = next.UTC()
		}
		if lastErr != nil {
			st.LastError = *lastErr
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("retry states: %w", describe(errors.Join(err)))
	}
	return out, nil
}
