package engine

import "strings"

// Incident is a lesson's incident card: the real queue bug the lesson replays, as its scenario
// file declares it (incident-system, incident-source, incident-what, incident-guard,
// incident-fix). Every line is the scenario author's, checked at the source it names; the
// engine only carries it to the lab (i), run's report, the transcript and list --json.
type Incident struct {
	System  string   `json:"system"`  // the system and the versions concerned
	Sources []string `json:"sources"` // the issue, pull request or commit, each with its link
	What    string   `json:"what"`    // what happened, in one paragraph of our words
	Guard   string   `json:"guard"`   // the real statement's guard, paraphrased
	Fix     string   `json:"fix"`     // the leaselab statement that fixes it
	// FixToggle is the toggle that turns the fix on: the lesson's teaches.
	FixToggle string `json:"fix_toggle"`
}

// Lines is the card as lines of text, each a label and its words, for a report or a screen
// that wraps them itself.
func (i *Incident) Lines() []string {
	if i == nil {
		return nil
	}
	lines := []string{"System: " + i.System}
	for _, s := range i.Sources {
		lines = append(lines, "Source: "+s)
	}
	lines = append(lines, "What happened: "+i.What, "Its guard: "+i.Guard, "The fix here: "+i.Fix)
	if i.FixToggle != "" {
		lines = append(lines, "Fix toggle: --"+i.FixToggle+" (a key in the lab; a flag of run and explore)")
	}
	return lines
}

// AppendLine adds a line to one of the card's fields (the field's lines joined by a space).
func (i *Incident) AppendLine(field *string, line string) {
	if *field == "" {
		*field = line
		return
	}
	*field = strings.TrimSpace(*field + " " + line)
}
