package store

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// wOK is access(2)'s W_OK: may this process write the path.
const wOK = 2

// checkWritable says, before any connection is opened, why this process could not write the
// database at abs: a file it may not write, or a folder in which it could not make the file
// (when exists is false) or its -wal and -shm (a WAL database needs both beside it). SQLite
// itself would open such a file read-only, create the -wal and -shm in a writable folder for
// its first read, fail at the first write, and leave both behind: so it is asked first, with
// access(2), which opens nothing (opening and closing the file would drop the POSIX locks
// other connections of this process hold on it). Root passes, as the kernel lets it write.
func checkWritable(abs string, exists bool) error {
	dir := filepath.Dir(abs)
	if !exists {
		if syscall.Access(dir, wOK) != nil {
			return &EnvError{Path: abs, Err: fmt.Errorf("the folder %s is read-only to this user: leaselab cannot create the file there; choose another path", dir)}
		}
		return nil
	}
	if err := syscall.Access(abs, wOK); err != nil {
		mode := ""
		if fi, serr := os.Stat(abs); serr == nil {
			mode = fmt.Sprintf(" (mode %04o)", fi.Mode().Perm())
		}
		return &EnvError{Path: abs, Err: fmt.Errorf("the file is read-only to this user%s: leaselab writes its rows there and changed nothing; make it writable (chmod u+w %s) or choose another file", mode, abs)}
	}
	if (size(abs+"-wal") < 0 || size(abs+"-shm") < 0) && syscall.Access(dir, wOK) != nil {
		return &EnvError{Path: abs, Err: fmt.Errorf("the folder %s is read-only to this user: a WAL database needs %s-wal and %s-shm beside it, which leaselab could not make; leaselab changed nothing",
			dir, filepath.Base(abs), filepath.Base(abs))}
	}
	return nil
}

// frozenFile says whether the checkpointed file at abs (no -wal, no -shm: no connection has it
// open) is one the watch must read as immutable: one this user may not write. Reading a WAL
// file makes its -wal and -shm, and only a connection that may write the file removes them
// when it closes (tidyWAL); this user's would stay, with the file's mode, and a -shm the
// owner's workers could not write would make their writes fail. So a file no one may write
// (no w in its mode; root aside) is read as immutable: it cannot change while it is watched.
// A file that someone else may write is refused with what to do instead: its owner's workers
// may start at any time, and an immutable read would not see them.
func frozenFile(abs string) (bool, error) {
	if syscall.Access(abs, wOK) == nil {
		return false, nil
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return false, &EnvError{Path: abs, Err: err}
	}
	if fi.Mode().Perm()&0o222 == 0 {
		return true, nil
	}
	return false, &EnvError{Path: abs, Err: fmt.Errorf("the file is read-only to this user (mode %04o) and no program has it open: reading it would make %s-wal and %s-shm that this user could not remove, and that would stop its owner's workers from writing; start a worker on it first (the watch then shares their -wal and -shm), or watch it as its owner",
		fi.Mode().Perm(), filepath.Base(abs), filepath.Base(abs))}
}
