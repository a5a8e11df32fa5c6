package ui

import (
	"fmt"
	"slices"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/checks"
	"leaselab/ui/common"
)

// A lab served to a room reports what it shows, in a few words, for the teacher's table, and can
// be offered another scenario by the teacher. An offer never throws a run away by itself: the
// lab opens it only when the attendee presses O.

// LabStatus is what a lab shows, in a few words.
type LabStatus struct {
	Scenario string
	Steps    int // steps that did something since the scenario opened
	// Settings are the lab's toggles and durations, and RowLocks whether its database locks rows
	// (then the toggles only such a database has are the lab's too), as the last frame read
	// them; Framed says that a frame has been read.
	Framed   bool
	Settings engine.Settings
	RowLocks bool
	Verdict  string // "PASS", "FAIL", or the live checks: "5 hold, 2 open"
	Free     bool   // the workers free-run
	Held     bool   // the room holds the free run back (a served lab)
	// Processed and Messages are the outbox's Processed rows and all its rows, as the last
	// frame read them.
	Processed, Messages int
	Offer               string // a scenario offered and not yet opened
	Quit                bool   // the user pressed q: a lab that ends without it ended on an error
}

// OfferMsg offers the lab a scenario (send it with tea.Program.Send). From names who offers it.
type OfferMsg struct{ Scenario, From string }

// offering wraps the lab's model: it takes offers, opens one on O, and reports the lab's status
// whenever it changes.
type offering struct {
	Model
	report func(LabStatus) // must not block: it is called from Update
	offer  string
	last   LabStatus
}

// Update handles an offer and the key that takes it; everything else goes to the lab.
func (o offering) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case OfferMsg:
		if !slices.Contains(o.cycle, msg.Scenario) || o.quitting {
			return o, nil
		}
		o.offer = msg.Scenario
		o.keys.OpenOffer.SetEnabled(true)
		o.status = common.Status{Text: fmt.Sprintf("%s offers the scenario %s: press %s to open it on a fresh database (this run ends); keep working to stay",
			msg.From, msg.Scenario, common.KeyName(o.keys.OpenOffer)), Level: common.LevelWarn}
		o.Model, cmd = o.update(msg) // lays the status line out again
	case tea.KeyMsg:
		if act, on := o.keys.match(msg); act == actOpenOffer && on && o.offer != "" && !o.quitting {
			name := o.offer
			o.offer = ""
			o.keys.OpenOffer.SetEnabled(false)
			o.Model, cmd = o.reopen(name, "the offered scenario")
			break
		}
		o.Model, cmd = o.update(msg)
	default:
		o.Model, cmd = o.update(msg)
	}
	if st := o.labStatus(); st != o.last {
		o.last = st
		o.report(st)
	}
	return o, cmd
}

// labStatus sums the lab up from its last frame.
func (o offering) labStatus() LabStatus {
	st := LabStatus{Scenario: o.target, Steps: o.track.Acted(), Free: o.free.on, Held: o.free.on && o.free.held != "", Offer: o.offer, Quit: o.quitting}
	f := o.frame
	if f == nil {
		return st
	}
	if f.Summary != nil {
		st.Processed, st.Messages = f.Summary.Outbox.Processed, f.Summary.Messages
	}
	if f.Name != "" {
		st.Scenario = f.Name
	}
	st.Framed, st.Settings, st.RowLocks = true, f.Settings, f.RowLocks
	switch {
	case f.Summary == nil:
	case f.Done && f.Summary.Passed:
		st.Verdict = "PASS"
	case f.Done:
		st.Verdict = "FAIL"
	default:
		fails, open, holds, _, _ := checks.Counts(checks.Classify(f))
		st.Verdict = fmt.Sprintf("%d hold", holds)
		if fails > 0 {
			st.Verdict += fmt.Sprintf(", %d FAIL", fails)
		}
		if open > 0 {
			st.Verdict += fmt.Sprintf(", %d open", open)
		}
	}
	return st
}
