// Package filekind names what a file is when it is not a regular file, for the errors of the
// places that read only regular files (a scenario, a database): opening a FIFO or a terminal
// blocks until someone writes, and a blocked open or read cannot be interrupted.
package filekind

import "os"

// Of says what a file of mode m is, to follow "is": "a directory", "a named pipe (FIFO)", "a
// character device (a terminal or /dev/null, say)", "a block device", "a socket" or "a special
// file"; "" for a regular file.
func Of(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeCharDevice != 0:
		return "a character device (a terminal or /dev/null, say)"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}
