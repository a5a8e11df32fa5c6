package engine

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"leaselab/engine/internal/keyed"
)

// ProviderResult is the payment provider's answer to a status check.
type ProviderResult struct {
	Status        string // PaymentPaid or PaymentFailed
	TransactionID string // made by the provider; "" when Failed
}

// Provider is the fake payment provider. Its answers are deterministic per key, it counts every
// call per key (the side-effects ledger), and it can tell the transaction ids it made from any
// other, so that a check can prove that ids in the database came from it. Latency is in scenario
// time: a worker that calls it at t holds the answer only at t+Latency. What it keeps grows with
// the keys called, 4 bytes each for the seeded keys. Safe for concurrent use.
type Provider struct {
	mu    sync.Mutex
	fail  map[string]bool // explicit outcomes; nil means the default rule
	calls *keyed.Table[uint32]
	total int // calls, all keys
	keys  int // keys called
	again int // keys called more than once
}

// newProvider returns a provider sized for a run of n messages. failKeys, when not empty, lists
// exactly the keys that fail; otherwise a key fails when its number is a multiple of 3 (PAY-003,
// PAY-006: the default six give 4 Paid and 2 Failed).
func newProvider(failKeys []string, n int) *Provider {
	p := &Provider{calls: keyed.New[uint32](min(n, MaxMessages))}
	if len(failKeys) > 0 {
		p.fail = map[string]bool{}
		for _, k := range failKeys {
			p.fail[k] = true
		}
	}
	return p
}

// Fails reports the provider's deterministic outcome for key.
func (p *Provider) Fails(key string) bool {
	if p.fail != nil {
		return p.fail[key]
	}
	i := strings.LastIndexFunc(key, func(r rune) bool { return r < '0' || r > '9' })
	if n, err := strconv.Atoi(key[i+1:]); err == nil {
		return n%3 == 0
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return h.Sum32()%3 == 0
}

// CheckPaymentStatus answers a status check for key and counts the call. A Paid answer carries
// the transaction id txn_KEY_N, N the call's number for key.
func (p *Provider) CheckPaymentStatus(key string) ProviderResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls.At(key)
	*c++
	p.total++
	switch *c {
	case 1:
		p.keys++
	case 2:
		p.again++
	}
	if p.Fails(key) {
		return ProviderResult{Status: PaymentFailed}
	}
	return ProviderResult{Status: PaymentPaid, TransactionID: "txn_" + key + "_" + strconv.FormatUint(uint64(*c), 10)}
}

// Calls returns the number of status checks per key. It builds a map of every key called;
// CallsFor and CallCounts count without it.
func (p *Provider) Calls() map[string]int { return p.calledMore(0) }

// CallsFor is the number of status checks for key.
func (p *Provider) CallsFor(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int(p.calls.Get(key))
}

// CallCounts returns the status checks, all keys together, the keys called, and the keys called
// more than once.
func (p *Provider) CallCounts() (calls, keys, again int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total, p.keys, p.again
}

// calledAgain returns the keys called more than once, with their calls.
func (p *Provider) calledAgain() map[string]int { return p.calledMore(1) }

// calledMore returns the keys called more than n times, with their calls.
func (p *Provider) calledMore(n uint32) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	p.calls.Each(func(k keyed.Ref, c *uint32) {
		if *c > n {
			out[k.String()] = int(*c)
		}
	})
	return out
}

// Issued reports whether the provider made transaction id: txn_KEY_N for a key that does not
// fail, N from 1 to the calls made for it.
func (p *Provider) Issued(id string) bool {
	rest, ok := strings.CutPrefix(id, "txn_")
	i := strings.LastIndexByte(rest, '_')
	if !ok || i < 0 {
		return false
	}
	key, num := rest[:i], rest[i+1:]
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil || n < 1 || strconv.FormatUint(n, 10) != num {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.Fails(key) && uint32(n) <= p.calls.Get(key)
}

// Gateway is the fake payment gateway through which payments are created. Each creation writes
// the payment and its outbox message in one transaction, and is counted per key and per caller.
type Gateway struct {
	db        DB
	mu        sync.Mutex
	calls     *keyed.Table[uint32] // key -> calls
	total     int
	byWorkers int // calls by callers other than seedCaller
	maxPerKey int
}

// NewGateway returns a gateway that writes to db.
func NewGateway(db DB) *Gateway { return newGateway(db, 0) }

// newGateway is NewGateway sized for a run of n messages.
func newGateway(db DB, n int) *Gateway {
	return &Gateway{db: db, calls: keyed.New[uint32](min(n, MaxMessages))}
}

// CreatePayment counts the call, then creates the payment and its outbox row atomically.
func (g *Gateway) CreatePayment(ctx context.Context, caller string, p NewPayment) error {
	g.mu.Lock()
	c := g.calls.At(p.Key)
	*c++
	g.total++
	if caller != seedCaller {
		g.byWorkers++
	}
	g.maxPerKey = max(g.maxPerKey, int(*c))
	g.mu.Unlock()
	return g.db.CreatePayment(ctx, p)
}

// CreationCalls returns the total calls, the calls made by callers other than "seed" (workers),
// and the largest number of calls for any one key.
func (g *Gateway) CreationCalls() (total, byWorkers, maxPerKey int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total, g.byWorkers, g.maxPerKey
}

// Keys returns the keys the gateway was asked to create, sorted.
func (g *Gateway) Keys() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var keys []string
	g.calls.Each(func(k keyed.Ref, c *uint32) {
		if *c > 0 {
			keys = append(keys, k.String())
		}
	})
	sort.Strings(keys)
	return keys
}

// eachKey calls fn with every key the gateway was asked to create, seeded keys first.
func (g *Gateway) eachKey(fn func(k keyed.Ref)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls.Each(func(k keyed.Ref, c *uint32) {
		if *c > 0 {
			fn(k)
		}
	})
}

// seedCaller is the caller name of the seeding step.
const seedCaller = "seed"

// MessageKey is the idempotency key of the i-th seeded payment (1-based): PAY-001.
func MessageKey(i int) string { return keyed.Key(i) }

// SeedPayment is the i-th (1-based) of n seeded payments: PAY-00i, created (i-n-1) ms before
// start, so that claim order is creation order.
func SeedPayment(i, n int, start time.Time) NewPayment {
	key := MessageKey(i)
	amount := int64(1000 + 250*((i-1)%8))
	return NewPayment{
		Key:       key,
		Amount:    amount,
		CreatedAt: start.Add(time.Duration(i-n-1) * time.Millisecond),
		Payload:   fmt.Sprintf(`{"idempotencyKey":%q,"amount":%d}`, key, amount),
	}
}

// Seed creates n payments PAY-001… through the gateway, one transaction each.
func Seed(ctx context.Context, g *Gateway, n int, start time.Time) error {
	for i := 1; i <= n; i++ {
		p := SeedPayment(i, n, start)
		if err := g.CreatePayment(ctx, seedCaller, p); err != nil {
			return fmt.Errorf("seed %s: %w", p.Key, err)
		}
	}
	return nil
}
