package diagram

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"leaselab/engine"
)

// recordedAfter is the run of after the lab's goldens draw (ui/testdata): its concurrent phase
// differs from run to run, so the picture in the docs is drawn from this recorded one.
const recordedAfter = "../testdata/diagram-after.events.json"

// afterPicture is the picture of the recorded after in docs/lab.md.
const afterPicture = "../../docs/pictures/after-diagram.svg"

func readRecordedAfter(t *testing.T) Input {
	t.Helper()
	data, err := os.ReadFile(recordedAfter)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Workers []string
		Events  []engine.Event
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", recordedAfter, err)
	}
	return Input{Name: "after", Events: rec.Events, Workers: rec.Workers}
}

func parseSVG(t *testing.T, data []byte) Shape {
	t.Helper()
	s, err := ReadSVGShape(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func checkSameShape(t *testing.T, got, want Shape) {
	t.Helper()
	if d := want.Differences(got); d != "" {
		t.Error(d)
	}
}

// TestSVGIsTheDiagramsModel draws the recorded after as SVG, parses it, and requires its lanes,
// columns, events, leases and marks to be those of the model the lab's diagram draws.
func TestSVGIsTheDiagramsModel(t *testing.T) {
	in := readRecordedAfter(t)
	var b bytes.Buffer
	if err := WriteSVG(&b, in); err != nil {
		t.Fatal(err)
	}
	want := ShapeOf(in)
	if len(want.Lanes) != 2 || len(want.Events) < 20 || len(want.Leases) < 6 || len(want.Marks) < 20 {
		t.Fatalf("the recorded after draws too little to compare: %+v", want)
	}
	checkSameShape(t, parseSVG(t, b.Bytes()), want)
	for _, word := range []string{"What the bars show", "reclaimed PAY-001", "LockedUntilUtc", "reclaim (lease had ended)"} {
		if !bytes.Contains(b.Bytes(), []byte(word)) {
			t.Errorf("the picture does not say %q", word)
		}
	}
}

// TestSVGEscapesWhatTheRunNames gives workers and keys the characters XML reserves and control
// characters: the SVG must stay well-formed and say them as text.
func TestSVGEscapesWhatTheRunNames(t *testing.T) {
	at := time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)
	w, key := `W<&>"'`+"\x1b[31m", `PAY-<b>&amp;`+"\x00"
	events := []engine.Event{
		{Seq: 1, At: at, Kind: engine.EvClaim, Worker: w, Key: key, Outcome: engine.OutcomeWon, Until: at.Add(500 * time.Millisecond), Version: 1},
		{Seq: 2, At: at, Kind: engine.EvFinalize, Worker: w, Key: key, Outcome: engine.OutcomeCommitted, Version: 1},
	}
	in := Input{Name: "a<b & c", Events: events, Workers: []string{w}}
	var b bytes.Buffer
	if err := WriteSVG(&b, in); err != nil {
		t.Fatal(err)
	}
	got := parseSVG(t, b.Bytes())
	checkSameShape(t, got, ShapeOf(in))
	if got.Lanes[0] != `W<&>"'?[31m` {
		t.Errorf("lane name read back as %q", got.Lanes[0])
	}
}

// TestSVGOfNoEvents is a picture of a run that has not begun: well-formed, its lanes and no
// columns.
func TestSVGOfNoEvents(t *testing.T) {
	in := Input{Name: "empty", Workers: []string{"Worker-A"}}
	var b bytes.Buffer
	if err := WriteSVG(&b, in); err != nil {
		t.Fatal(err)
	}
	checkSameShape(t, parseSVG(t, b.Bytes()), ShapeOf(in))
}

// TestAfterPictureIsTheProgram fails unless docs/pictures/after-diagram.svg is what WriteSVG
// draws now for the recorded after: a change of the drawing must remake it
// (LEASELAB_UPDATE_PICTURES=1 go test ./ui/diagram -run AfterPicture).
func TestAfterPictureIsTheProgram(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSVG(&b, readRecordedAfter(t)); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("LEASELAB_UPDATE_PICTURES") == "1" {
		if err := os.WriteFile(afterPicture, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(afterPicture)
	if err != nil {
		t.Fatalf("%v (LEASELAB_UPDATE_PICTURES=1 go test ./ui/diagram -run AfterPicture makes it)", err)
	}
	if !bytes.Equal(data, b.Bytes()) {
		t.Fatalf("%s is not what the program draws now: remake it with LEASELAB_UPDATE_PICTURES=1 go test ./ui/diagram -run AfterPicture", afterPicture)
	}
}
