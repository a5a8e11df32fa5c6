package engine

// keyed holds one value per message key, compactly: the seeded keys (PAY-001, PAY-002, …, as
// MessageKey makes them) in a slice indexed by their number, with no map entry and no copy of
// the key, and any other key (a shared database's own rows, a number past the run's size) in a
// map. The zero value of T means "nothing recorded for this key". Not safe for concurrent use.
type keyed[T any] struct {
	dense []T // dense[n-1] is PAY-n
	limit int // the largest n kept in dense
	other map[string]*T
	order []string // other's keys, in the order they came
}

// minDenseLimit is the dense part's size for runs smaller than it: a key numbered within it is
// cheap whatever the run's size.
const minDenseLimit = 1024

// newKeyed returns a table sized for a run of messages keys.
func newKeyed[T any](messages int) *keyed[T] {
	limit := max(min(messages, MaxMessages), minDenseLimit)
	return &keyed[T]{dense: make([]T, 0, min(messages, MaxMessages)), limit: limit, other: map[string]*T{}}
}

// seededNumber is n when key is exactly MessageKey(n), with n ≥ 1.
func seededNumber(key string) (int, bool) {
	if len(key) < 7 || key[:4] != "PAY-" || len(key) > 4+9 {
		return 0, false
	}
	d := key[4:]
	if len(d) > 3 && d[0] == '0' {
		return 0, false // MessageKey pads to three digits, no more
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

// at returns the value for key, adding a zero one if it has none.
func (t *keyed[T]) at(key string) *T {
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

// get returns the value for key; the zero value when it has none.
func (t *keyed[T]) get(key string) T {
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

// keyRef names a key of a keyed table without making its string: a seeded key by its number,
// any other by itself.
type keyRef struct {
	n    int // PAY-n, when name is ""
	name string
}

// String is the key.
func (k keyRef) String() string {
	if k.name != "" {
		return k.name
	}
	return MessageKey(k.n)
}

// each calls fn for every key that has a value slot, seeded keys first in number order, then
// the others in the order they came; fn may change the value. Slots of seeded keys below the
// highest seen hold the zero value when nothing was recorded for them.
func (t *keyed[T]) each(fn func(k keyRef, v *T)) {
	for i := range t.dense {
		fn(keyRef{n: i + 1}, &t.dense[i])
	}
	for _, k := range t.order {
		fn(keyRef{name: k}, t.other[k])
	}
}

// pad3 pads a number's digits to three, as MessageKey's %03d does.
func pad3(s string) string {
	for len(s) < 3 {
		s = "0" + s
	}
	return s
}
