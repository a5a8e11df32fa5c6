package filekind

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Each kind of file a user may name by mistake is named for what it is, from the mode the
// system gives it.
func TestOf(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for path, want := range map[string]string{
		file:        "",
		dir:         "a directory",
		fifo:        "a named pipe (FIFO)",
		"/dev/null": "a character device (a terminal or /dev/null, say)",
		sock:        "a socket",
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Of(fi.Mode()); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	if got := Of(os.ModeIrregular); got != "a special file" {
		t.Errorf("an irregular file: %q", got)
	}
}
