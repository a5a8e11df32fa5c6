package explore

import (
	"bytes"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"strconv"

	"leaselab/engine"
)

// A state's key is the hash of its rows, what failed attempts left on them and the session's
// memory (engine.Probe.WriteStateAs), with the budget its schedule has spent. With symmetry on,
// workers of one configuration are interchangeable: the key is the least of the keys written
// under each renaming of them (renaming.go), so a state and its mirror image (Worker-A holding
// PAY-001 and Worker-B idle; Worker-B holding it and Worker-A idle) are one state.

// keyWriter is what a state's key is written from: the session's memory, renamed.
type keyWriter interface {
	WriteStateAs(w io.Writer, order []int, name, id func(string) string)
}

// stateKey is a state's key under renaming p (nil: none): its rows, what failed attempts left
// on them and the session's memory, hashed.
func stateKey(rows []engine.Row, retry []engine.RetryState, st keyWriter, p *renaming, buf *bytes.Buffer) (key [2]uint64) {
	buf.Reset()
	writeRows(buf, rows, p.id())
	writeRetry(buf, retry)
	if p == nil {
		st.WriteStateAs(buf, nil, nil, nil)
	} else {
		st.WriteStateAs(buf, p.order, p.name(), p.id())
	}
	h := fnv.New128a()
	h.Write(buf.Bytes())
	return sumKey(h)
}

// canonicalKey is the least of the state's keys under each renaming, and the renaming that
// gives it (an index into perms; 0, the identity, when there is one renaming).
func canonicalKey(rows []engine.Row, retry []engine.RetryState, st keyWriter, perms []*renaming, buf *bytes.Buffer) (key [2]uint64, which int) {
	key = stateKey(rows, retry, st, perms[0], buf)
	for i := 1; i < len(perms); i++ {
		if k := stateKey(rows, retry, st, perms[i], buf); less(k, key) {
			key, which = k, i
		}
	}
	return key, which
}

func less(a, b [2]uint64) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }

// withUsed mixes into a state's key the budget its schedule has spent (crashes, clock moves,
// pauses): two nodes with the same rows and workers but different budgets left can reach
// different states, so merging them would let the bounded proof over-claim.
func withUsed(key [2]uint64, u used) [2]uint64 {
	h := fnv.New128a()
	fmt.Fprintf(h, "%d|%d|%d|%d|%d\n", key[0], key[1], u.crashes, u.clockMoves, u.pauses)
	return sumKey(h)
}

// sumKey folds a 128-bit hash's sum into a key.
func sumKey(h hash.Hash) (key [2]uint64) {
	sum128 := h.Sum(nil)
	for i := 0; i < 8; i++ {
		key[0] = key[0]<<8 | uint64(sum128[i])
		key[1] = key[1]<<8 | uint64(sum128[8+i])
	}
	return key
}

// writeRows writes the rows as the database holds them, every column the engine reads, each
// row's owner through name.
func writeRows(w io.Writer, rows []engine.Row, name func(string) string) {
	var b []byte
	for _, r := range rows {
		b = strconv.AppendInt(b[:0], r.ID, 10)
		for _, s := range []string{r.IdempotencyKey, string(r.Status)} {
			b = append(append(b, '|'), s...)
		}
		for _, n := range []int64{r.CreatedAt.UnixMilli(), r.ProcessedAt.UnixMilli()} {
			b = strconv.AppendInt(append(b, '|'), n, 10)
		}
		b = append(append(b, '|'), name(r.LockedBy)...)
		for _, n := range []int64{r.LockedUntil.UnixMilli(), int64(r.Attempts), r.LeaseVersion} {
			b = strconv.AppendInt(append(b, '|'), n, 10)
		}
		for _, s := range []string{string(r.PaymentStatus), r.TransactionID} {
			b = append(append(b, '|'), s...)
		}
		b = strconv.AppendInt(append(b, '|'), int64(r.Amount), 10)
		w.Write(append(b, '\n'))
	}
}

// writeRetry writes what failed attempts left on each message (RetryColumns), in Id order.
func writeRetry(h io.Writer, retry []engine.RetryState) {
	var b []byte
	for _, r := range retry {
		b = append(append(b[:0], "retry "...), r.Status...)
		b = strconv.AppendInt(append(b, '|'), r.Attempts, 10)
		b = strconv.AppendInt(append(b, '|'), r.NextAttempt.UnixMilli(), 10)
		b = strconv.AppendQuote(append(b, '|'), r.LastError)
		h.Write(append(b, '\n'))
	}
}

// dbKeyOf is the key of a database copy: its rows and what failed attempts left on them, hashed
// (never renamed: a copy is of one database).
func dbKeyOf(rows []engine.Row, retry []engine.RetryState) uint64 {
	h := fnv.New64a()
	writeRows(h, rows, same)
	writeRetry(h, retry)
	return h.Sum64()
}

func same(s string) string { return s }
