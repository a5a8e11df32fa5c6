package keyed

import "testing"

// Keys that are not the seeded PAY-NNN (a shared database's own, one numbered past the run's
// size, PAY-0001) are kept by name, apart from the seeded ones.
func TestOtherKeys(t *testing.T) {
	k := New[uint32](3)
	for _, key := range []string{"PAY-001", "PAY-0001", "PAY-1", "pay-001", "PAY-999999999", "ORDER-7", "PAY-002"} {
		*k.At(key)++
	}
	*k.At("PAY-001")++
	if k.Get("PAY-001") != 2 || k.Get("PAY-0001") != 1 || k.Get("PAY-1") != 1 || k.Get("PAY-002") != 1 || k.Get("PAY-003") != 0 {
		t.Fatalf("get: %d %d %d %d %d", k.Get("PAY-001"), k.Get("PAY-0001"), k.Get("PAY-1"), k.Get("PAY-002"), k.Get("PAY-003"))
	}
	var keys []string
	k.Each(func(r Ref, v *uint32) {
		if *v > 0 {
			keys = append(keys, r.String())
		}
	})
	want := []string{"PAY-001", "PAY-002", "PAY-0001", "PAY-1", "pay-001", "PAY-999999999", "ORDER-7"}
	if len(keys) != len(want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("keys %v, want %v", keys, want)
		}
	}
	if len(k.other) != 5 {
		t.Errorf("%d keys by name, want 5", len(k.other))
	}
}
