package engine

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProviderResult is the payment provider's answer to a status check.
type ProviderResult struct {
	Status        string // PaymentPaid or PaymentFailed
	TransactionID string // made by the provider; "" when Failed
}

// Provider is the fake payment provider. Its answers are deterministic per key, it counts every
// call per key (the side-effects ledger), and it remembers every transaction id it made, so that
// a check can prove that ids in the database came from it. Latency is in scenario time: a worker
// that calls it at t holds the answer only at t+Latency. Safe for concurrent use.
type Provider struct {
	mu     sync.Mutex
	fail   map[string]bool // explicit outcomes; nil means the default rule
	calls  map[string]int
	issued map[string]bool
}

// NewProvider returns a provider. failKeys, when not empty, lists exactly the keys that fail;
// otherwise a key fails when its number is a multiple of 3 (PAY-003, PAY-006: the default six
// give 4 Paid and 2 Failed).
func NewProvider(failKeys []string) *Provider {
	p := &Provider{calls: map[string]int{}, issued: map[string]bool{}}
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

// CheckPaymentStatus answers a status check for key and counts the call.
func (p *Provider) CheckPaymentStatus(key string) ProviderResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[key]++
	if p.Fails(key) {
		return ProviderResult{Status: PaymentFailed}
	}
	id := fmt.Sprintf("txn_%s_%d", key, p.calls[key])
	p.issued[id] = true
	return ProviderResult{Status: PaymentPaid, TransactionID: id}
}

// Calls returns the number of status checks per key.
func (p *Provider) Calls() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.calls)
}

// Issued reports whether the provider made transaction id.
func (p *Provider) Issued(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issued[id]
}

// Gateway is the fake payment gateway through which payments are created. Each creation writes
// the payment and its outbox message in one transaction, and is counted per key and per caller.
type Gateway struct {
	db    DB
	mu    sync.Mutex
	calls map[string]map[string]int // key -> caller -> calls
}

// NewGateway returns a gateway that writes to db.
func NewGateway(db DB) *Gateway { return &Gateway{db: db, calls: map[string]map[string]int{}} }

// CreatePayment counts the call, then creates the payment and its outbox row atomically.
func (g *Gateway) CreatePayment(ctx context.Context, caller string, p NewPayment) error {
	g.mu.Lock()
	if g.calls[p.Key] == nil {
		g.calls[p.Key] = map[string]int{}
	}
	g.calls[p.Key][caller]++
	g.mu.Unlock()
	return g.db.CreatePayment(ctx, p)
}

// CreationCalls returns the total calls, the calls made by callers other than "seed" (workers),
// and the largest number of calls for any one key.
func (g *Gateway) CreationCalls() (total, byWorkers, maxPerKey int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, byCaller := range g.calls {
		n := 0
		for caller, c := range byCaller {
			n += c
			if caller != SeedCaller {
				byWorkers += c
			}
		}
		total += n
		maxPerKey = max(maxPerKey, n)
	}
	return total, byWorkers, maxPerKey
}

// Keys returns the keys the gateway was asked to create, sorted.
func (g *Gateway) Keys() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	keys := make([]string, 0, len(g.calls))
	for k := range g.calls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SeedCaller is the caller name of the seeding step.
const SeedCaller = "seed"

// MessageKey is the idempotency key of the i-th seeded payment (1-based): PAY-001.
func MessageKey(i int) string { return fmt.Sprintf("PAY-%03d", i) }

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
		if err := g.CreatePayment(ctx, SeedCaller, p); err != nil {
			return fmt.Errorf("seed %s: %w", p.Key, err)
		}
	}
	return nil
}
