package share

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzBody: whatever body a code carries under a right checksum, plain or deflated, the decoder
// reads it or refuses it, without a panic and without allocating past its bounds.
func FuzzBody(f *testing.F) {
	for _, c := range []Code{{Lesson: "playground"}, {File: []byte("name: x\n")}} {
		b, err := c.marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(deflate(b), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, deflated bool) {
		head := byte(Version << 1)
		if deflated {
			head |= flagDeflated
		}
		raw := append([]byte{head}, body...)
		raw = binary.BigEndian.AppendUint32(raw, crc32.ChecksumIEEE(raw))
		c, err := Decode(enc.EncodeToString(raw))
		if err == nil && len(c.Moves) > 4*maxItems {
			t.Errorf("%d moves from a body of %d bytes", len(c.Moves), len(body))
		}
	})
}
