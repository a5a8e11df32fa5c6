package assets

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Only regular files are read: a FIFO, a directory or a device is refused before it is opened
// (opening a FIFO would block until a writer came, and Ctrl-C cannot interrupt that).
func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.scenario")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "link.scenario")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        "is a named pipe (FIFO)",
		link:        "is a named pipe (FIFO)",
		dir:         "is a directory",
		"/dev/null": "is a character device",
	} {
		done := make(chan error, 1)
		go func() { _, _, err := Load(path, 1<<16); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Load(%s) = %v, want %q", path, err, want)
			}
		case <-time.After(10 * time.Second):
			// Release the blocked open, so that the test ends instead of hanging.
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			t.Fatalf("Load(%s) blocked", path)
		}
	}
	regular := filepath.Join(dir, "ok.scenario")
	if err := os.WriteFile(regular, []byte("name: ok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _, err := Load(regular, 1<<16); err != nil || string(b) != "name: ok\n" {
		t.Errorf("Load(regular) = %q, %v", b, err)
	}
}
