package cli

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/ui/serve"
)

// panicky is a root that panics when asked for one scenario, as a bug in a lab would.
type panicky struct {
	*labRoot
	on string
}

func (p panicky) Open(ctx context.Context, name string) (*engine.Session, error) {
	if name == p.on {
		panic("a bug in one lab")
	}
	return p.labRoot.Open(ctx, name)
}

// TestServePanicEndsOneLab: a panic in one attendee's lab ends that lab only: its database is
// removed, the server keeps serving, and the other attendee's lab steps on.
func TestServePanicEndsOneLab(t *testing.T) {
	ts := &testServer{tmp: t.TempDir(), served: make(chan error, 1), log: &syncBuf{}}
	t.Setenv("TMPDIR", ts.tmp)
	key, _, err := serve.HostKey(filepath.Join(t.TempDir(), "host_key"))
	if err != nil {
		t.Fatal(err)
	}
	ts.hostPK = key.PublicKey()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	cfg := labServerConfig(backends(), key, serveOptions{maxSessions: 4}, connectLine(ln.Addr()), ts.log)
	real := cfg.NewRoot
	cfg.NewRoot = func() serve.Root { return panicky{real().(*labRoot), "before"} }
	if ts.srv, err = serve.New(cfg); err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ts.serve(t, ln)

	a := ts.connect(t, dialOpts{user: "ana"})
	b := ts.connect(t, dialOpts{user: "ben"})
	a.waitFor("PAY-006")
	b.waitFor("PAY-006")
	a.press(" ")
	a.waitFor("Worker-A claimed PAY-001")
	a.press("\t") // the next scenario is before: its Open panics
	a.exit()
	ts.waitSessions(t, 1)
	if left, _ := filepath.Glob(filepath.Join(ts.tmp, "*")); len(left) != 1 {
		t.Fatalf("after ana's panic, folders %v: want ben's only", left)
	}
	b.press(" ")
	b.waitFor("Worker-A claimed PAY-001")
	c := ts.connect(t, dialOpts{user: "cy"})
	c.waitFor("PAY-006")
	if !strings.Contains(ts.log.String(), "ana 127.0.0.1") || !strings.Contains(ts.log.String(), "ended on an error") {
		t.Errorf("the log does not say ana's lab ended on an error:\n%s", ts.log.String())
	}
	if !strings.Contains(a.out.String(), "this lab stopped on an internal error") {
		t.Errorf("ana was not told: %q", tail(a.out.String(), 300))
	}
}
