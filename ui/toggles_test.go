package ui

import (
	"strings"
	"testing"
)

// The ? screen's toggles group lists every toggle's key from the registry, the last saying when a
// flip applies; on a database with row locks skip-locked comes before the heartbeat, as it always
// has, and off it the key is off. (A toggle added to the registry may follow.)
func TestToggleHelpGroup(t *testing.T) {
	const every = "l leasing on/off · a atomic claim on/off · o ownership check on/off · k fencing on/off"
	for _, tc := range []struct {
		rowLocks bool
		want     string
	}{
		{false, every + " · h heartbeat on/off"},
		{true, every + " · u skip-locked on/off (PostgreSQL) · h heartbeat on/off"},
	} {
		k := defaultLabKeys()
		k.setRowLocks(tc.rowLocks)
		var got []string
		for _, g := range k.helpGroups() {
			if g.title != "toggles" {
				continue
			}
			for _, e := range g.entries {
				if e.bs[0].Enabled() {
					got = append(got, helpKeys(e.bs)+" "+e.desc)
				}
			}
		}
		s := strings.Join(got, " · ")
		if !strings.HasPrefix(s, tc.want) || !strings.HasSuffix(s, " — each from the next action on") {
			t.Errorf("row locks %v: toggles\n %s\nwant them to start\n %s\nand end with when a flip applies", tc.rowLocks, s, tc.want)
		}
		if !tc.rowLocks && strings.Contains(s, "skip-locked") {
			t.Errorf("no row locks: skip-locked's key is on: %s", s)
		}
	}
}
