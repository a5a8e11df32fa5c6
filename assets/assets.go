// Package assets holds leaselab's embedded files: the scenario library.
package assets

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"

	"leaselab/internal/filekind"
)

//go:embed scenarios/*.scenario
var scenarios embed.FS

// Ext is the file extension of scenario files.
const Ext = ".scenario"

// Default is the scenario the lab opens on.
const Default = "playground"

// order is the order in which the lab's tab key and `leaselab list` show the built-in
// scenarios; any not listed follow in name order.
func order() []string {
	return []string{"playground", "before", "after", "naive-claim", "stale-owner", "aba-fencing", "lease-too-short", "many-workers", "skip-locked",
		"retry-backoff", "dead-letter", "rescuer-race", "clock-skew",
		"state-only-completion", "finished-and-failed", "coarse-clock", "stale-delete"}
}

// Museum lists the incident lessons (issue 32), in the order Names gives them: each replays a
// real queue's bug, and `leaselab list` shows them under a heading of their own.
func Museum() []string {
	return []string{"state-only-completion", "finished-and-failed", "coarse-clock", "stale-delete"}
}

// Scenario returns the embedded scenario file called name, and its path for messages.
func Scenario(name string) ([]byte, string, bool) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return nil, "", false // a path ("./after"), never a built-in name: path.Join would clean it into one
	}
	p := path.Join("scenarios", name+Ext)
	b, err := fs.ReadFile(scenarios, p)
	if err != nil {
		return nil, "", false
	}
	return b, p, true
}

// Names lists the embedded scenarios, in teaching order (the playground, then the lessons): the
// lab's tab order and `leaselab list`.
func Names() []string {
	entries, _ := fs.ReadDir(scenarios, "scenarios")
	rank := map[string]int{}
	for i, n := range order() {
		rank[n] = i + 1
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), Ext); ok {
			names = append(names, n)
		}
	}
	sort.SliceStable(names, func(i, j int) bool {
		ri, rj := rank[names[i]], rank[names[j]]
		switch {
		case ri != 0 && rj != 0:
			return ri < rj
		case ri != 0 || rj != 0:
			return ri != 0
		}
		return names[i] < names[j]
	})
	return names
}

// Load finds a scenario by built-in name or file path and returns its text and the name to use
// in messages. A file larger than limit is refused before it is read whole.
func Load(nameOrFile string, limit int64) ([]byte, string, error) {
	if b, p, ok := Scenario(nameOrFile); ok {
		return b, p, nil
	}
	fi, err := os.Stat(nameOrFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(nameOrFile, "/.") {
			return nil, "", fmt.Errorf("unknown scenario %q (built in: %s; or give a file path)", nameOrFile, strings.Join(Names(), ", "))
		}
		return nil, "", fmt.Errorf("scenario %s: %w", nameOrFile, err)
	}
	// Only a regular file is read: opening a FIFO or a terminal blocks until someone writes,
	// and a blocked open or read cannot be interrupted, not even by Ctrl-C.
	if err := regular(nameOrFile, fi); err != nil {
		return nil, "", err
	}
	if fi.Size() > limit {
		return nil, "", fmt.Errorf("%s: file too large: %d bytes (at most %d)", nameOrFile, fi.Size(), limit)
	}
	// O_NONBLOCK: should the path be swapped for a FIFO after the Stat, the open still returns
	// at once, and the second check below refuses it.
	f, err := os.OpenFile(nameOrFile, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", fmt.Errorf("scenario %s: %w", nameOrFile, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, "", fmt.Errorf("scenario %s: %w", nameOrFile, err)
	}
	if err := regular(nameOrFile, fi); err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("scenario %s: %w", nameOrFile, err)
	}
	return b, nameOrFile, nil
}

// regular refuses anything but a regular file, and says what it is instead.
func regular(name string, fi os.FileInfo) error {
	if what := filekind.Of(fi.Mode()); what != "" {
		return fmt.Errorf("scenario %s: is %s, not a regular file: save the scenario to a file and give its path", name, what)
	}
	return nil
}
