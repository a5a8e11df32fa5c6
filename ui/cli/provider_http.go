package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
)

// httpProvider is a payment provider reached over HTTP (worker --slots --provider URL): each
// status check is a POST of {"key", "worker", "lease_version"} as JSON, answered with
// {"status": "Paid" or "Failed", "transaction_id"}. A call that fails (no answer, a status other
// than 200, an answer it cannot read) gives the message back, unprocessed, to be claimed again.
// The lease version lets the provider tell a stale call from a current one, as fencing does.
type httpProvider struct {
	url    string
	worker string // what the worker writes to LockedBy
	client *http.Client
}

// providerCallTimeout bounds one call: a provider that never answers holds a slot this long.
const providerCallTimeout = 30 * time.Second

// maxProviderAnswer is the most of an answer that is read; maxTransactionID the longest id taken.
const (
	maxProviderAnswer = 64 << 10
	maxTransactionID  = 200
)

// newHTTPProvider checks raw, an http or https URL, for the worker named name.
func newHTTPProvider(raw, name string) (*httpProvider, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%q is not a URL: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return nil, fmt.Errorf("%q: want an http:// or https:// URL with a host", raw)
	}
	return &httpProvider{url: raw, worker: engine.WorkerName(name), client: &http.Client{Timeout: providerCallTimeout}}, nil
}

// String names the provider without a password its URL may carry.
func (p *httpProvider) String() string {
	if u, err := url.Parse(p.url); err == nil {
		return words.Escape(u.Redacted())
	}
	return "(the provider)"
}

type providerCall struct {
	Key          string `json:"key"`
	Worker       string `json:"worker"`
	LeaseVersion int64  `json:"lease_version"`
}

type providerAnswer struct {
	Status        string `json:"status"`
	TransactionID string `json:"transaction_id"`
}

// call asks the provider for m's payment status, as m's lease holder.
func (p *httpProvider) call(ctx context.Context, m engine.Message) (engine.ProviderResult, error) {
	body, err := json.Marshal(providerCall{Key: m.IdempotencyKey, Worker: p.worker, LeaseVersion: m.LeaseVersion})
	if err != nil {
		return engine.ProviderResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return engine.ProviderResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once, by the caller's words
		}
		return engine.ProviderResult{}, fmt.Errorf("provider: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxProviderAnswer))
	if err != nil {
		return engine.ProviderResult{}, fmt.Errorf("provider: reading its answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return engine.ProviderResult{}, fmt.Errorf("provider answered %s", resp.Status)
	}
	var a providerAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return engine.ProviderResult{}, fmt.Errorf("provider: its answer is not the JSON expected: %w", err)
	}
	return checkAnswer(a)
}

// checkAnswer takes an answer only when it is one the finalize can write: Paid with a
// transaction id of printable ASCII, or Failed without one.
func checkAnswer(a providerAnswer) (engine.ProviderResult, error) {
	switch {
	case a.Status == engine.PaymentFailed && a.TransactionID == "":
		return engine.ProviderResult{Status: engine.PaymentFailed}, nil
	case a.Status == engine.PaymentFailed:
		return engine.ProviderResult{}, errors.New("provider answered Failed with a transaction id")
	case a.Status != engine.PaymentPaid:
		return engine.ProviderResult{}, fmt.Errorf("provider answered status %q, want Paid or Failed", words.Escape(a.Status))
	case a.TransactionID == "" || len(a.TransactionID) > maxTransactionID:
		return engine.ProviderResult{}, fmt.Errorf("provider answered Paid with a transaction id of %d bytes, want 1 to %d", len(a.TransactionID), maxTransactionID)
	}
	for _, r := range a.TransactionID {
		if r < 0x21 || r > 0x7e {
			return engine.ProviderResult{}, fmt.Errorf("provider answered Paid with transaction id %q: want printable ASCII", words.Escape(a.TransactionID))
		}
	}
	return engine.ProviderResult{Status: engine.PaymentPaid, TransactionID: a.TransactionID}, nil
}
