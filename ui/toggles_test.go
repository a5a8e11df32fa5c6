package ui

import (
	"strings"
	"testing"
)

// The ? screen's toggles group lists every toggle's key from the registry, the last saying when a
// flip applies; on a database with row locks skip-locked comes before the heartbeat, as it always
// has, and off it the key is off.
func TestToggleHelpGroup(t *testing.T) {
	for _, tc := range []struct {
		rowLocks bool
		want     string
	}{
		{false, "l leasing on/off · a atomic claim on/off · o ownership check on/off · k fencing on/off · h heartbeat on/off — each from the next action on"},
		{true, "l leasing on/off · a atomic claim on/off · o ownership check on/off · k fencing on/off · u skip-locked on/off (PostgreSQL) · h heartbeat on/off — each from the next action on"},
	} {
		k := DefaultKeyMap()
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
		if s := strings.Join(got, " · "); s != tc.want {
			t.Errorf("row locks %v: toggles\n %s\nwant\n %s", tc.rowLocks, s, tc.want)
		}
	}
}
