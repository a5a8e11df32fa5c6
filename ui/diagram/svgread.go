package diagram

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ReadSVGShape parses an SVG that WriteSVG drew, strictly as XML, and returns the Shape it
// shows, read from its elements: the lane names, the columns and the event each one names, the
// lease labels and the marks (by their ids and letters). It fails on anything that is not one
// well-formed SVG 1.1 document with a size. Tests use it to hold a picture to its model.
func ReadSVGShape(data []byte) (Shape, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var root svgNode
	if err := dec.Decode(&root); err != nil {
		return Shape{}, fmt.Errorf("not well-formed XML: %w", err)
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if cd, ok := tok.(xml.CharData); err != nil || !ok || len(bytes.TrimSpace(cd)) > 0 {
			return Shape{}, fmt.Errorf("content after the root element: %v %v", tok, err)
		}
	}
	if root.XMLName.Space != "http://www.w3.org/2000/svg" || root.XMLName.Local != "svg" || root.attr("version") != "1.1" {
		return Shape{}, fmt.Errorf("the root is %v version %q, not an SVG 1.1 svg", root.XMLName, root.attr("version"))
	}
	if root.attr("width") == "" || root.attr("height") == "" || root.attr("viewBox") == "" {
		return Shape{}, errors.New("the svg has no width, height or viewBox")
	}
	var s Shape
	var err error
	lanes := map[string]string{} // lane id → name
	root.walk(func(n svgNode) {
		if n.XMLName.Local != "g" || err != nil {
			return
		}
		switch class := n.attr("class"); class {
		case "lane":
			n.walk(func(c svgNode) {
				if c.attr("class") == "lane-name" {
					lanes[n.attr("id")] = c.Text
					s.Lanes = append(s.Lanes, c.Text)
				}
			})
		case "event", "end":
			s.Columns++
			if title, ok := n.child("title"); ok && class == "event" {
				s.Events = append(s.Events, title.Text)
			}
		case "lease":
			for _, c := range n.Nodes {
				if c.attr("class") == "label" {
					s.Leases = append(s.Leases, c.Text)
				}
			}
		case "mark":
			var lane, col int
			if _, e := fmt.Sscanf(n.attr("id"), "mark-%d-%d", &lane, &col); e != nil {
				err = fmt.Errorf("mark id %q: %w", n.attr("id"), e)
				return
			}
			letter, _ := n.child("text")
			s.Marks = append(s.Marks, fmt.Sprintf("lane-%d %d %s", lane, col, letter.Text))
		}
	})
	for i, m := range s.Marks {
		id, rest, _ := strings.Cut(m, " ")
		s.Marks[i] = lanes[id] + " " + rest
	}
	return s, err
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

// Differences says how got differs from want ("" when they agree): the lanes, the columns and
// events in order, and the leases and marks as sets (a drawing may order them lane by lane).
func (want Shape) Differences(got Shape) string {
	var out []string
	if !slices.Equal(got.Lanes, want.Lanes) {
		out = append(out, fmt.Sprintf("lanes %q, want %q", got.Lanes, want.Lanes))
	}
	if got.Columns != want.Columns || !slices.Equal(got.Events, want.Events) {
		out = append(out, fmt.Sprintf("%d columns, events:\n%s\nwant %d columns:\n%s", got.Columns, strings.Join(got.Events, "\n"),
			want.Columns, strings.Join(want.Events, "\n")))
	}
	if g, w := sortedCopy(got.Leases), sortedCopy(want.Leases); !slices.Equal(g, w) {
		out = append(out, fmt.Sprintf("leases %q, want %q", g, w))
	}
	if g, w := sortedCopy(got.Marks), sortedCopy(want.Marks); !slices.Equal(g, w) {
		out = append(out, fmt.Sprintf("marks %q, want %q", g, w))
	}
	return strings.Join(out, "\n")
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }
