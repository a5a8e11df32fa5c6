// Package keyed holds one value per message key, compactly: the ledger's, the provider's and the
// gateway's tables of counts and records by idempotency key. It knows the seeded keys' form
// (Key: PAY-001) and nothing else of the engine, which imports it.
package keyed

import (
	"fmt"
	"strconv"
)

// Table holds one value per message key, compactly: the seeded keys (PAY-001, PAY-002, …, as
// Key makes them) in a slice indexed by their number, with no map entry and no copy of
// the key, and any other key (a shared database's own rows, a number past the run's size) in a
// map. The zero value of T means "nothing recorded for this key". Not safe for concurrent use.
type Table[T any] struct {
	dense []T // dense[n-1] is PAY-n
	limit int // the largest n kept in dense
	other map[string]*T
	order []string // other's keys, in the order they came
}

// minDenseLimit is the dense part's size for runs smaller than it: a key numbered within it is
// cheap whatever the run's size.
const minDenseLimit = 1024

// New returns a table sized for a run of messages keys (the caller bounds messages).
func New[T any](messages int) *Table[T] {
	limit := max(messages, minDenseLimit)
	return &Table[T]{dense: make([]T, 0, messages), limit: limit, other: map[string]*T{}}
}

// Key is the idempotency key of the n-th seeded message (1-based): PAY-001.
func Key(n int) string {
	if n < 0 {
		return fmt.Sprintf("PAY-%03d", n)
	}
	return "PAY-" + pad3(strconv.Itoa(n))
}

// seededNumber is n when key is exactly Key(n), with n ≥ 1.
func seededNumber(key string) (int, bool) {
	if len(key) < 7 || key[:4] != "PAY-" || len(key) > 4+9 {
		return 0, false
	}
	d := key[4:]
	if len(d) > 3 && d[0] == '0' {
		return 0, false // Key pads to three digits, no more
	}
	n := 0
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n >= 1
}

// At returns the value for key, adding a zero one if it has none.
func (t *Table[T]) At(key string) *T {
	if n, ok := seededNumber(key); ok && n <= t.limit {
		if n > len(t.dense) {
			var zero T
			for len(t.dense) < n {
				t.dense = append(t.dense, zero)
			}
		}
		return &t.dense[n-1]
	}
	v := t.other[key]
	if v == nil {
		v = new(T)
		t.other[key] = v
		t.order = append(t.order, key)
	}
	return v
}

// Get returns the value for key; the zero value when it has none.
func (t *Table[T]) Get(key string) T {
	if n, ok := seededNumber(key); ok && n <= t.limit {
		if n <= len(t.dense) {
			return t.dense[n-1]
		}
		var zero T
		return zero
	}
	if v := t.other[key]; v != nil {
		return *v
	}
	var zero T
	return zero
}

// Ref names a key of a table without making its string: a seeded key by its number, any other
// by itself.
type Ref struct {
	n    int // PAY-n, when name is ""
	name string
}

// String is the key.
func (k Ref) String() string {
	if k.name != "" {
		return k.name
	}
	return Key(k.n)
}

// Each calls fn for every key that has a value slot, seeded keys first in number order, then
// the others in the order they came; fn may change the value. Slots of seeded keys below the
// highest seen hold the zero value when nothing was recorded for them.
func (t *Table[T]) Each(fn func(k Ref, v *T)) {
	for i := range t.dense {
		fn(Ref{n: i + 1}, &t.dense[i])
	}
	for _, k := range t.order {
		fn(Ref{name: k}, t.other[k])
	}
}

// pad3 pads a number's digits to three, as Key's %03d does.
func pad3(s string) string {
	for len(s) < 3 {
		s = "0" + s
	}
	return s
}
