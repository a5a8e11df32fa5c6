package filekind

import (
	"os"
	"testing"
)

// Each kind of file a user may name by mistake is named for what it is, from its mode (the
// loader's test, assets.TestLoadRefusesWhatIsNotAFile, makes real ones).
func TestOf(t *testing.T) {
	for m, want := range map[os.FileMode]string{
		0o644:                             "",
		os.ModeDir | 0o755:                "a directory",
		os.ModeNamedPipe:                  "a named pipe (FIFO)",
		os.ModeDevice | os.ModeCharDevice: "a character device (a terminal or /dev/null, say)",
		os.ModeDevice:                     "a block device",
		os.ModeSocket:                     "a socket",
		os.ModeIrregular:                  "a special file",
	} {
		if got := Of(m); got != want {
			t.Errorf("Of(%v) = %q, want %q", m, got, want)
		}
	}
}
