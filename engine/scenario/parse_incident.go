package scenario

import (
	"strings"

	"leaselab/engine"
)

// The incident card's lines of a scenario file (issue 32): the real queue bug a lesson replays.
// Each key but incident-system may repeat; a field's lines are joined by a space. The text is
// free: a '#' is kept ("River #1302").
//
//	incident-system: River (riverqueue/river), before v0.48.0
//	incident-source: River issue #1302: https://github.com/riverqueue/river/issues/1302
//	incident-what:   what happened, in our words
//	incident-guard:  the real statement's guard, paraphrased
//	incident-fix:    the leaselab statement that fixes it
//
// A lesson with a card names its fix toggle with teaches:, and has every field.

// incidentHeader reads an incident-* key; handled is false for any other.
func (p *parser) incidentHeader(n int, key, val string) (handled bool, err error) {
	field, ok := strings.CutPrefix(key, "incident-")
	if !ok {
		return false, nil
	}
	if p.sc.Incident == nil {
		p.sc.Incident = &engine.Incident{}
	}
	if p.seen[key] == 0 {
		p.seen[key] = n
	}
	if p.seen["incident"] == 0 {
		p.seen["incident"] = n
	}
	inc := p.sc.Incident
	if val == "" {
		return true, p.errf(n, "%s: empty line (write the words after the colon)", key)
	}
	switch field {
	case "system":
		if inc.System != "" {
			return true, p.errf(n, "duplicate key %q", key)
		}
		inc.System = val
	case "source":
		inc.Sources = append(inc.Sources, val)
	case "what":
		inc.AppendLine(&inc.What, val)
	case "guard":
		inc.AppendLine(&inc.Guard, val)
	case "fix":
		inc.AppendLine(&inc.Fix, val)
	default:
		return true, p.errf(n, "unknown key %q (an incident card has incident-system, incident-source, incident-what, incident-guard, incident-fix)", key)
	}
	return true, nil
}

// incidentDone checks a card whole, once the file is read, and names its fix toggle.
func (p *parser) incidentDone() error {
	inc := p.sc.Incident
	if inc == nil {
		return nil
	}
	line := p.seen["incident"]
	for _, f := range []struct{ name, val string }{{"incident-system", inc.System}, {"incident-what", inc.What},
		{"incident-guard", inc.Guard}, {"incident-fix", inc.Fix}} {
		if f.val == "" {
			return p.errf(line, "incident card: missing %q", f.name)
		}
	}
	if len(inc.Sources) == 0 {
		return p.errf(line, "incident card: missing \"incident-source\" (a card states only what its source says)")
	}
	if p.sc.Teaches == "" {
		return p.errf(line, "incident card: name the fix's toggle with \"teaches:\"")
	}
	inc.FixToggle = p.sc.Teaches
	return nil
}
