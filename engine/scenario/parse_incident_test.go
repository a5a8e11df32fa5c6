package scenario_test

import (
	"strings"
	"testing"

	"leaselab/engine/scenario"
)

const incidentCard = `name: i
teaches: fencing
incident-system: Queue v1
incident-source: Queue #12: https://example.org/12
incident-what: one line,
incident-what: and the next # kept
incident-guard: WHERE id = ?
incident-fix: WHERE Id = :id AND LeaseVersion = :version
`

// TestParseIncident: the card's lines are free text (a '#' is kept), a field's lines join,
// and the fix toggle is the lesson's teaches.
func TestParseIncident(t *testing.T) {
	sc, err := scenario.Parse("i.scenario", []byte(incidentCard))
	if err != nil {
		t.Fatal(err)
	}
	inc := sc.Incident
	if inc == nil || inc.System != "Queue v1" || len(inc.Sources) != 1 || inc.Sources[0] != "Queue #12: https://example.org/12" ||
		inc.What != "one line, and the next # kept" || inc.FixToggle != "fencing" {
		t.Fatalf("card %+v", inc)
	}
}

// TestParseIncidentRefusesBadInput: a card without a field, without a source, without its fix
// toggle, or with an unknown key is refused at its line.
func TestParseIncidentRefusesBadInput(t *testing.T) {
	for _, c := range []struct{ drop, add, want string }{
		{"incident-guard: WHERE id = ?\n", "", `i.scenario:3: incident card: missing "incident-guard"`},
		{"incident-source: Queue #12: https://example.org/12\n", "", `missing "incident-source"`},
		{"teaches: fencing\n", "", `name the fix's toggle with "teaches:"`},
		{"", "incident-when: 2026\n", `unknown key "incident-when"`},
		{"", "incident-system: again\n", `duplicate key "incident-system"`},
		{"", "incident-what:\n", `incident-what: empty line`},
	} {
		src := strings.Replace(incidentCard, c.drop, "", 1) + c.add
		if c.drop == "" {
			src = incidentCard + c.add
		}
		_, err := scenario.Parse("i.scenario", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("drop %q add %q: error %v, want %q", c.drop, c.add, err, c.want)
		}
	}
}
