package explore

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"leaselab/engine"
	"leaselab/engine/words"
)

// regenerated are the header keys WriteScenario writes itself, from the scenario as the search
// ran it (its flags applied); every other header line of the source is kept as it is.
var regenerated = map[string]bool{
	"name": true, "title": true, "explain": true, "teaches": true, "verdict-pass": true, "verdict-fail": true,
	"verdict-checks": true, "messages": true, "workers": true, "worker": true, "lease": true, "skew": true, "seed": true,
}

// WriteScenario writes the violation as a scenario file that `leaselab run FILE` reproduces:
// the source's header (src, the file the search started from) with the settings the search ran
// with, the schedule as its steps, and the broken checks as the ones that decide its verdict, so
// that the run fails on them. It has no expect block: its verdict is expected to pass, and does
// not.
func WriteScenario(w io.Writer, src []byte, sc *engine.Scenario, v *Violation) error {
	var b bytes.Buffer
	name := sc.Name + "-found"
	ids := failedIDs(v)
	fmt.Fprintf(&b, "# Found by leaselab explore %s: a shortest schedule that breaks %s.\n", sc.Name, strings.Join(ids, ", "))
	fmt.Fprintf(&b, "# leaselab run FILE replays it, step by step, and fails the same %s.\n", words.Plural(len(ids), "check"))
	if v.Witness != nil {
		fmt.Fprintf(&b, "# Why: %s.\n", v.Witness.Text)
	}
	if v.Shares != nil {
		fmt.Fprintf(&b, "# The share of continuations that still fail, after each move: %s.\n", shareLine(v))
	}
	fmt.Fprintf(&b, "name: %s\n", name)
	fmt.Fprintf(&b, "title: FOUND BY EXPLORE: %s breaks %s\n", sc.Name, strings.Join(ids, ", "))
	fmt.Fprintf(&b, "explain: A shortest schedule of %d moves, found by searching every schedule of %s breadth-first.\n", len(v.Schedule), sc.Name)
	fmt.Fprintf(&b, "messages: %d\n", sc.Messages)
	var plain []string
	var threads []engine.WorkerSpec
	for _, ws := range sc.Workers {
		if ws.ID == engine.WorkerName(ws.Short) {
			plain = append(plain, ws.Short)
		} else {
			threads = append(threads, ws)
		}
	}
	fmt.Fprintf(&b, "workers: %s\n", strings.Join(plain, " "))
	for _, ws := range threads {
		fmt.Fprintf(&b, "worker: %s id=%s\n", ws.Short, ws.ID)
	}
	for _, ws := range sc.Workers {
		if ws.Skew != 0 {
			fmt.Fprintf(&b, "skew: %s %+dms\n", ws.Short, ws.Skew.Milliseconds())
		}
	}
	fmt.Fprintf(&b, "lease: %s\n", sc.Settings.Lease)
	fmt.Fprintf(&b, "seed: %d\n", sc.Seed)
	for _, t := range engine.Registry() {
		fmt.Fprintf(&b, "%s: %s\n", t.Name, engine.OnOff(t.Of(sc.Settings)))
	}
	if err := keptHeader(&b, src); err != nil {
		return err
	}
	fmt.Fprintf(&b, "verdict-pass: NO CHECK BROKEN: THE SCHEDULE NO LONGER BREAKS %s ✅\n", strings.ToUpper(strings.Join(ids, ", ")))
	fmt.Fprintf(&b, "verdict-fail: THE SCHEDULE EXPLORE FOUND BREAKS %s ❌\n", strings.ToUpper(strings.Join(ids, ", ")))
	fmt.Fprintf(&b, "verdict-checks: %s\n", strings.Join(ids, " "))
	b.WriteString("\nsteps:\n")
	for i, t := range v.Schedule {
		fmt.Fprintf(&b, "  %s\n", t)
		if v.Shares != nil && i+1 == v.NoReturn {
			// The point of no return, as a note the lab's timeline and a transcript show.
			fmt.Fprintf(&b, "  note ! the point of no return: after %s, every continuation of the schedule breaks %s\n", t, strings.Join(ids, ", "))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// keptHeader copies the source's header lines that WriteScenario does not write itself: every
// "key: value" line before the steps and the expect blocks, but the toggles, the regenerated
// keys and the incident card.
func keptHeader(b *bytes.Buffer, src []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, _, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		if key == "steps" || strings.HasPrefix(key, "expect") {
			break
		}
		if _, toggle := engine.LookupToggle(key); toggle || regenerated[key] || strings.HasPrefix(key, "incident-") {
			continue // an incident card is the lesson's, not the schedule found in it
		}
		b.WriteString(line + "\n")
	}
	return sc.Err()
}
