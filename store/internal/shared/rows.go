package shared

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"leaselab/engine"
)

// Rows is what both drivers' result sets offer: database/sql's *sql.Rows and pgx.Rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Each reads every row of rows with scan and hands it to use, one at a time. A scan error
// comes back as "what: err", an error of the result set as "what: describe(err)", and an
// error of use as it is. The caller closes rows.
func Each[T any](rows Rows, what string, describe func(error) error, scan func(Rows) (T, error), use func(T) error) error {
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := use(v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, describe(err))
	}
	return nil
}

// Reader is how a store runs one read statement: the bound of a call without a deadline of
// its own, how the driver's errors read, and the statement's rows.
type Reader struct {
	Timeout  time.Duration
	Describe func(error) error
	Query    func(ctx context.Context, q string) (Rows, error)
}

// Read runs the read statement q with r and hands each row, as scan reads it, to use, as Each
// does; the statement's own error comes back as "what: describe(err)".
func Read[T any](ctx context.Context, r Reader, what, q string, scan func(Rows) (T, error), use func(T) error) error {
	ctx, cancel := WithTimeout(ctx, r.Timeout)
	defer cancel()
	rows, err := r.Query(ctx, q)
	if err != nil {
		return fmt.Errorf("%s: %w", what, r.Describe(err))
	}
	defer closeRows(rows)
	return Each(rows, what, r.Describe, scan, use)
}

// closeRows closes a result set of either driver: database/sql's Close returns an error (that
// of the result set, which Each has read already), pgx's returns nothing.
func closeRows(rows Rows) {
	switch r := rows.(type) {
	case interface{ Close() error }:
		r.Close()
	case interface{ Close() }:
		r.Close()
	}
}

// EachTransactionID reads with r the rows of q, each a payment's IdempotencyKey and
// TransactionId, and hands them to fn ("" for a NULL TransactionId).
func EachTransactionID(ctx context.Context, r Reader, q string, fn func(key, id string) error) error {
	type keyID struct {
		key string
		id  *string
	}
	return Read(ctx, r, "transaction ids", q, func(rows Rows) (keyID, error) {
		var k keyID
		err := rows.Scan(&k.key, &k.id)
		return k, err
	}, func(k keyID) error {
		if k.id == nil {
			return fn(k.key, "")
		}
		return fn(k.key, *k.id)
	})
}

// All reads every row of rows with scan, as Each does, and returns them in order (nil when
// there are none, and on an error).
func All[T any](rows Rows, what string, describe func(error) error, scan func(Rows) (T, error)) ([]T, error) {
	var out []T
	if err := Each(rows, what, describe, scan, func(v T) error {
		out = append(out, v)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// Collect gathers what each hands to its function: a Snapshot from an EachRow.
func Collect[T any](each func(func(T) error) error) ([]T, error) {
	var out []T
	err := each(func(v T) error {
		out = append(out, v)
		return nil
	})
	return out, err
}

// ScanMessage reads a row of Id, IdempotencyKey, Type, Payload: the naive worker's read.
func ScanMessage(r Rows) (engine.Message, error) {
	var m engine.Message
	err := r.Scan(&m.ID, &m.IdempotencyKey, &m.Type, &m.Payload)
	return m, err
}

// Claimed is a message a batch claim took, with its CreatedAtUtc as the driver reads it (T).
type Claimed[T any] struct {
	Msg     engine.Message
	Created T
}

// ScanClaimed returns the scan of a batch claim's RETURNING row (Id, IdempotencyKey, Type,
// Payload, LeaseVersion, CreatedAtUtc); every message it reads is leased until until.
func ScanClaimed[T any](until time.Time) func(Rows) (Claimed[T], error) {
	return func(r Rows) (Claimed[T], error) {
		var cl Claimed[T]
		err := r.Scan(&cl.Msg.ID, &cl.Msg.IdempotencyKey, &cl.Msg.Type, &cl.Msg.Payload, &cl.Msg.LeaseVersion, &cl.Created)
		cl.Msg.LockedUntil = until
		return cl, err
	}
}

// InClaimOrder returns the messages of got in claim order, oldest CreatedAtUtc first (compared
// by compare) and then by Id: RETURNING has no defined order.
func InClaimOrder[T any](got []Claimed[T], compare func(a, b T) int) []engine.Message {
	slices.SortFunc(got, func(a, b Claimed[T]) int {
		if c := compare(a.Created, b.Created); c != 0 {
			return c
		}
		return cmp.Compare(a.Msg.ID, b.Msg.ID)
	})
	out := make([]engine.Message, len(got))
	for i, cl := range got {
		out[i] = cl.Msg
	}
	return out
}

// Args is a statement's parameters as a trace shows them: each one named (named says whether
// it is, and how: nil names none), the others by their position, from 1.
func Args(args []any, named func(any) (engine.Arg, bool)) []engine.Arg {
	out := make([]engine.Arg, len(args))
	for i, a := range args {
		if named != nil {
			if arg, ok := named(a); ok {
				out[i] = arg
				continue
			}
		}
		out[i] = engine.Arg{Name: fmt.Sprint(i + 1), Value: a}
	}
	return out
}

// Index maps each of fs's keys to its value, as kv reads them: a schema's facts by name.
func Index[F any](fs []F, kv func(F) (key, value string)) map[string]string {
	m := make(map[string]string, len(fs))
	for _, f := range fs {
		k, v := kv(f)
		m[k] = v
	}
	return m
}
