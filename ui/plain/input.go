package plain

import (
	"bufio"
	"context"
	"io"
	"strings"
	"unicode/utf8"
)

// Keys come from a terminal one press at a time (raw mode: no echo, no line editing), or, from
// a pipe or a file, one key per line, so that a lesson can be scripted and tested:
//
//	space
//	x
//	A
//
// A line is a key as the lab's bindings name it: one character ("n", "+", "A", "?"), or one of
// the names below ("space", "left", "esc", …). Each key arrives on the channel in order; the
// channel closes at the end of the input.

// lineNames are the keys with a name of more than one character.
var lineNames = map[string]string{
	"space": " ", "left": "left", "right": "right", "esc": "esc", "escape": "esc",
	"enter": "enter", "tab": "tab", "shift+tab": "shift+tab", "ctrl+c": "ctrl+c",
}

// press is one press: its name as the lab's bindings spell it, or bad (a line that names no
// key, said as it was written).
type press struct {
	name string
	bad  string
}

// readLines sends the key of each line of r.
func readLines(ctx context.Context, r io.Reader, out chan<- press) {
	defer close(out)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k := press{name: line}
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue // a blank line or a comment in a scripted lesson
		case lineNames[strings.ToLower(line)] != "":
			k.name = lineNames[strings.ToLower(line)]
		case utf8.RuneCountInString(line) != 1:
			k = press{bad: line}
		}
		select {
		case out <- k:
		case <-ctx.Done():
			return
		}
	}
}

// readRaw sends the keys of a terminal in raw mode: each read is one press, or several typed
// at once (each a press), or an escape sequence (an arrow key).
func readRaw(ctx context.Context, r io.Reader, out chan<- press) {
	defer close(out)
	buf := make([]byte, 256)
	for {
		n, err := r.Read(buf)
		for _, k := range rawKeys(buf[:n]) {
			select {
			case out <- k:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// rawKeys splits what one read of a raw terminal returned into presses.
func rawKeys(b []byte) []press {
	var keys []press
	for len(b) > 0 {
		switch {
		case b[0] == 0x1b && len(b) >= 3 && (b[1] == '[' || b[1] == 'O'):
			// CSI or SS3: arrows, shift+tab; any other sequence is dropped whole.
			end := 2
			for end < len(b) && (b[end] < 0x40 || b[end] > 0x7e) {
				end++
			}
			if end < len(b) {
				if name := map[byte]string{'C': "right", 'D': "left", 'Z': "shift+tab"}[b[end]]; name != "" {
					keys = append(keys, press{name: name})
				}
				end++
			}
			b = b[end:]
			continue
		case b[0] == 0x1b:
			keys = append(keys, press{name: "esc"})
		case b[0] == 0x03:
			keys = append(keys, press{name: "ctrl+c"})
		case b[0] == '\r' || b[0] == '\n':
			keys = append(keys, press{name: "enter"})
		case b[0] == '\t':
			keys = append(keys, press{name: "tab"})
		case b[0] >= 0x20 && b[0] < 0x7f:
			keys = append(keys, press{name: string(b[0])})
		default:
			r, size := utf8.DecodeRune(b)
			if r != utf8.RuneError {
				keys = append(keys, press{bad: string(r)})
			}
			b = b[max(size, 1):]
			continue
		}
		b = b[1:]
	}
	return keys
}
