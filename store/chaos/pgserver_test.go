package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgServer is the chaos run's own PostgreSQL server, as .ci/pg.sh starts one: initdb in a
// folder of its own (owned by the postgres user when the test runs as root, since PostgreSQL
// refuses to run as root), listening on 127.0.0.1 at a free port, fsync off. The chaos kills its
// backends and restarts it: it must never be a server anyone else uses.
type pgServer struct {
	bin, dir string
	port     int
	asUser   string // "postgres" when the test runs as root; "" to run as ourselves
}

// pgBin is where Debian puts PostgreSQL 15's programs; LEASELAB_PG_BIN overrides it.
func pgBin() string {
	if b := os.Getenv("LEASELAB_PG_BIN"); b != "" {
		return b
	}
	return "/usr/lib/postgresql/15/bin"
}

// startPG starts a server of the test's own, stopped and removed when the test ends; it skips
// the test when there are no PostgreSQL programs.
func startPG(t *testing.T) *pgServer {
	t.Helper()
	s := &pgServer{bin: pgBin()}
	if _, err := os.Stat(filepath.Join(s.bin, "initdb")); err != nil {
		t.Skipf("no PostgreSQL programs in %s (LEASELAB_PG_BIN): %v", s.bin, err)
	}
	dir, err := os.MkdirTemp("", "leaselab-chaos-pg.")
	if err != nil {
		t.Fatal(err)
	}
	s.dir = dir
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root and no postgres user to run the server as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.asUser = "postgres"
	}
	t.Cleanup(func() {
		s.ctl("-m", "immediate", "-w", "-t", "30", "stop")
		os.RemoveAll(dir)
	})
	s.port = freePort(t)
	if out, err := s.run("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c wal_level=logical -c max_replication_slots=50", s.port, dir)
	if out, err := s.ctl("-l", filepath.Join(dir, "server.log"), "-w", "-t", "30", "-o", opts, "start"); err != nil {
		t.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
	return s
}

func (s *pgServer) data() string { return filepath.Join(s.dir, "data") }

// run runs one of the server's programs, as the postgres user when the test is root.
func (s *pgServer) run(prog string, args ...string) ([]byte, error) {
	path := filepath.Join(s.bin, prog)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	if s.asUser != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.WaitDelay = 5 * time.Second // a server started meanwhile may hold the output open
	return cmd.CombinedOutput()
}

func (s *pgServer) ctl(args ...string) ([]byte, error) {
	return s.run("pg_ctl", append([]string{"-D", s.data()}, args...)...)
}

// restart restarts the server (pg_ctl restart -m fast: every session is ended, the server shut
// down cleanly and started again with the same settings) and reports how long it was away.
func (s *pgServer) restart() (time.Duration, error) {
	began := time.Now()
	// -l again: without it the new server would write its log to pg_ctl's output, which it
	// keeps open, and this call would wait for it for ever.
	out, err := s.ctl("-l", filepath.Join(s.dir, "server.log"), "-m", "fast", "-w", "-t", "60", "restart")
	if err != nil {
		return 0, fmt.Errorf("pg_ctl restart: %w\n%s", err, out)
	}
	return time.Since(began), nil
}

// url is the URL of database db on the server, with the harness's application_name when
// harness is set (the connections the faults spare).
func (s *pgServer) url(db string, harness bool) string {
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
	if harness {
		u += "&application_name=" + harnessApp
	}
	return u
}

// harnessApp is the application_name of the harness's own connections: pg_terminate_backend
// spares them.
const harnessApp = "chaos-harness"

// createDB makes a fresh database for one run.
func (s *pgServer) createDB(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, s.url("postgres", true))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

// terminateWorkers ends every connection to database db but the harness's, as
// pg_terminate_backend does, and reports how many.
func (s *pgServer) terminateWorkers(ctx context.Context, db string) (int, error) {
	conn, err := pgx.Connect(ctx, s.url("postgres", true))
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
  FROM pg_stat_activity
 WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'
   AND application_name IS DISTINCT FROM $2`, db, harnessApp).Scan(&n)
	return n, err
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
