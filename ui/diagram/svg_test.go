package diagram

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
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

// svgNode is any element of a parsed SVG, with its children and text.
type svgNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []svgNode  `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n svgNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// child is n's first child element called name.
func (n svgNode) child(name string) (svgNode, bool) {
	for _, c := range n.Nodes {
		if c.XMLName.Local == name {
			return c, true
		}
	}
	return svgNode{}, false
}

// walk calls f for n and every element under it, in document order.
func (n svgNode) walk(f func(svgNode)) {
	f(n)
	for _, c := range n.Nodes {
		c.walk(f)
	}
}

// parseSVG parses data strictly as XML, fails unless its root is an SVG 1.1 <svg> with a size,
// and returns the Shape it draws: the lane names, the event columns' titles, the lease labels
// and the marks (read from their ids and letters).
func parseSVG(t *testing.T, data []byte) Shape {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var root svgNode
	if err := dec.Decode(&root); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if cd, ok := tok.(xml.CharData); err != nil || !ok || len(bytes.TrimSpace(cd)) > 0 {
			t.Fatalf("content after the root element: %v %v", tok, err)
		}
	}
	if root.XMLName.Space != "http://www.w3.org/2000/svg" || root.XMLName.Local != "svg" || root.attr("version") != "1.1" {
		t.Fatalf("root is %v version %q, want an SVG 1.1 svg", root.XMLName, root.attr("version"))
	}
	if root.attr("width") == "" || root.attr("height") == "" || root.attr("viewBox") == "" {
		t.Fatalf("no size: width %q height %q viewBox %q", root.attr("width"), root.attr("height"), root.attr("viewBox"))
	}
	var s Shape
	lanes := map[string]string{} // lane id → name
	root.walk(func(n svgNode) {
		class := n.attr("class")
		switch {
		case n.XMLName.Local == "g" && class == "lane":
			n.walk(func(c svgNode) {
				if c.attr("class") == "lane-name" {
					lanes[n.attr("id")] = c.Text
					s.Lanes = append(s.Lanes, c.Text)
				}
			})
		case n.XMLName.Local == "g" && (class == "event" || class == "end"):
			s.Columns++
			if title, ok := n.child("title"); ok && class == "event" {
				s.Events = append(s.Events, title.Text)
			}
		case n.XMLName.Local == "g" && class == "lease":
			for _, c := range n.Nodes {
				if c.attr("class") == "label" {
					s.Leases = append(s.Leases, c.Text)
				}
			}
		case n.XMLName.Local == "g" && class == "mark":
			var lane, col int
			if _, err := fmt.Sscanf(n.attr("id"), "mark-%d-%d", &lane, &col); err != nil {
				t.Fatalf("mark id %q: %v", n.attr("id"), err)
			}
			letter, _ := n.child("text")
			s.Marks = append(s.Marks, fmt.Sprintf("lane-%d %d %s", lane, col, letter.Text))
		}
	})
	for i, m := range s.Marks {
		id, rest, _ := strings.Cut(m, " ")
		s.Marks[i] = lanes[id] + " " + rest
	}
	return s
}

// sortedMarks are a Shape's marks sorted: the SVG draws them lane by lane, the Shape in column
// order; what must agree is the set.
func sortedMarks(s Shape) []string { return slices.Sorted(slices.Values(s.Marks)) }

func checkSameShape(t *testing.T, got, want Shape) {
	t.Helper()
	if !slices.Equal(got.Lanes, want.Lanes) {
		t.Errorf("lanes %q, want %q", got.Lanes, want.Lanes)
	}
	if got.Columns != want.Columns || !slices.Equal(got.Events, want.Events) {
		t.Errorf("%d columns, events:\n%s\nwant %d columns:\n%s", got.Columns, strings.Join(got.Events, "\n"), want.Columns, strings.Join(want.Events, "\n"))
	}
	if g, w := slices.Sorted(slices.Values(got.Leases)), slices.Sorted(slices.Values(want.Leases)); !slices.Equal(g, w) {
		t.Errorf("leases %q, want %q", g, w)
	}
	if g, w := sortedMarks(got), sortedMarks(want); !slices.Equal(g, w) {
		t.Errorf("marks %q, want %q", g, w)
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
