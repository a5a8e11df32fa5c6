package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/ui/diagram"
)

// TestTranscriptKeyWritesThePicture: w writes, beside the transcript, the space-time diagram
// that t draws now, as SVG under the same name, and the transcript shows it.
func TestTranscriptKeyWritesThePicture(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	dir := t.TempDir()
	l.m.cfg.TranscriptDir = dir
	l.press("e")
	if !l.m.Over() {
		t.Fatalf("stale-owner not over after e: %s", l.m.status.Text)
	}
	l.press("w")
	mds, _ := filepath.Glob(filepath.Join(dir, "leaselab-stale-owner-*.md"))
	if len(mds) != 1 {
		t.Fatalf("transcripts: %v", mds)
	}
	pic := strings.TrimSuffix(mds[0], ".md") + ".svg"
	data, err := os.ReadFile(pic)
	if err != nil {
		t.Fatal(err)
	}
	got, err := diagram.ReadSVGShape(data)
	if err != nil {
		t.Fatal(err)
	}
	if d := diagram.ShapeOf(l.m.DiagramInput()).Differences(got); d != "" || len(got.Events) == 0 {
		t.Errorf("the picture is not the lab's diagram (%d events): %s", len(got.Events), d)
	}
	md, _ := os.ReadFile(mds[0])
	if !strings.Contains(string(md), "]("+filepath.Base(pic)+")") {
		t.Errorf("the transcript does not show %s", filepath.Base(pic))
	}
}
