// Package share turns a moment of leaselab into a short printable code and back: the scenario
// (a built-in lesson's name, or a scenario file's text), the settings it was opened with (the
// flags run takes: toggles, workers, messages, lease, seed, …), and how to get to the moment
// from the scenario's start (the lab's recorded moves, or a counterexample's schedule found by
// explore). It is pure: no terminal, no database, no files.
//
// A code is one byte of version and flags, the body (deflated when that is shorter), and a
// CRC-32 of both, written in Crockford's base32: digits and capital letters without I, L, O
// and U, so that it reads aloud and copies from a slide without confusing 0 with O or 1 with
// I or l, any case is accepted, and it needs no escaping in a URL, a shell or a file name.
// Base64url would be a sixth shorter, but a code typed from a projector must not depend on
// the case of its letters, nor contain '-' and '_' that a line break or a font swallows.
package share

import (
	"bytes"
	"compress/flate"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"unicode"

	"leaselab/engine"
	"leaselab/engine/explore"
)

// Version is the version of the codes this package writes, and the newest it reads.
const Version = 1

// Code is what a share code carries.
type Code struct {
	// Lesson is a built-in lesson's name; "" when File holds the scenario.
	Lesson string
	// File is a scenario file's text, when the scenario is not a built-in lesson.
	File []byte
	// Overrides are the settings the scenario was opened with, as run's flags set them.
	Overrides engine.Overrides
	// Found, when set, is a counterexample found by explore: the scenario's script is
	// replaced by its schedule (explore.WriteScenario), as explore --open does.
	Found *Found
	// Moves are the commands made from the start, in order: the lab's history up to the moment.
	Moves []engine.Command
}

// Found is a counterexample found by explore: its schedule and the checks it broke.
type Found struct {
	Schedule []explore.Transition
	Checks   []string
}

// Errors a code is refused with (Decode wraps them with what was wrong).
var (
	// ErrDamaged: the code is not one a leaselab wrote (a character changed, added or missing).
	ErrDamaged = errors.New("damaged share code")
	// ErrNewer: the code was written by a newer leaselab.
	ErrNewer = errors.New("share code from a newer leaselab")
	// ErrCannotShare: the moment cannot be carried by a code (a free run, say).
	ErrCannotShare = errors.New("cannot be shared")
)

// alphabet is Crockford's base32.
const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var enc = base32.NewEncoding(alphabet).WithPadding(base32.NoPadding)

// flagDeflated in the first byte says the body is deflated.
const flagDeflated = 1

// maxBody bounds what a code's body may inflate to: a scenario file is at most 1 MiB (and
// this guards the decoder against a code that inflates without end).
const maxBody = 2 << 20

// Encode writes c as a code.
func Encode(c Code) (string, error) {
	body, err := c.marshal()
	if err != nil {
		return "", err
	}
	head := byte(Version << 1)
	if z := deflate(body); len(z) < len(body) {
		body, head = z, head|flagDeflated
	}
	raw := append([]byte{head}, body...)
	raw = binary.BigEndian.AppendUint32(raw, crc32.ChecksumIEEE(raw))
	return enc.EncodeToString(raw), nil
}

// Decode reads a code written by Encode. Case does not matter, I and L read as 1, O as 0, and
// hyphens and spaces are left out. A damaged code, one of a newer version, or one whose body
// does not read is refused with an error that says which (ErrDamaged, ErrNewer).
func Decode(s string) (Code, error) {
	norm := normalize(s)
	raw, err := enc.DecodeString(norm)
	// The last character may carry bits past the last byte: a code is read only as written.
	if err != nil || len(raw) < 5 || enc.EncodeToString(raw) != norm {
		return Code{}, fmt.Errorf("%w: %q is not a whole code (a character is wrong or missing)", ErrDamaged, short(s))
	}
	sum := binary.BigEndian.Uint32(raw[len(raw)-4:])
	raw = raw[:len(raw)-4]
	if crc32.ChecksumIEEE(raw) != sum {
		return Code{}, fmt.Errorf("%w: its checksum does not match (a character was changed, added or left out)", ErrDamaged)
	}
	if v := int(raw[0] >> 1); v > Version {
		return Code{}, fmt.Errorf("%w: it is a version %d code, and this leaselab reads codes up to version %d: update leaselab to open it", ErrNewer, v, Version)
	} else if v < 1 {
		return Code{}, fmt.Errorf("%w: version %d", ErrDamaged, v)
	}
	body := raw[1:]
	if raw[0]&flagDeflated != 0 {
		if body, err = inflate(body); err != nil {
			return Code{}, fmt.Errorf("%w: %v", ErrDamaged, err)
		}
	}
	var c Code
	if err := c.unmarshal(body); err != nil {
		return Code{}, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return c, nil
}

// normalize is s as Crockford reads it: upper case, I and L as 1, O as 0, no separators.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r = unicode.ToUpper(r); r {
		case '-', ' ', '\t', '\n', '\r':
		case 'I', 'L':
			b.WriteByte('1')
		case 'O':
			b.WriteByte('0')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// short is s cut for an error message.
func short(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression) // the level is valid: no error
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func inflate(b []byte) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(b))
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("its compressed part does not read: %v", err)
	}
	if len(out) > maxBody {
		return nil, fmt.Errorf("it inflates to more than %d bytes", maxBody)
	}
	return out, nil
}
