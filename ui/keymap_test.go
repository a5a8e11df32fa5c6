package ui

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/diagram"
	"leaselab/ui/sqlpane"
	"leaselab/ui/workers"
)

// bindingsOf returns every key.Binding field of a key map struct, by field name, and each of its
// toggle keys ("Toggles[2]").
func bindingsOf(km any) map[string]key.Binding {
	out := map[string]key.Binding{}
	v := reflect.ValueOf(km)
	for i := 0; i < v.NumField(); i++ {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if b, ok := v.Field(i).Interface().(key.Binding); ok {
			out[v.Type().Field(i).Name] = b
		}
		if bs, ok := v.Field(i).Interface().([engine.NumRegistry]key.Binding); ok {
			for j, b := range bs {
				out[fmt.Sprintf("%s[%d]", v.Type().Field(i).Name, j)] = b
			}
		}
	}
	return out
}

// defaultLabKeys are the lab's keys and its panes', as a new lab has them.
func defaultLabKeys() labKeys {
	return labKeys{DefaultKeyMap(), common.DefaultScrollKeys(), diagram.DefaultKeys(), sqlpane.DefaultKeys(DefaultKeyMap().Step), workers.DefaultKeys()}
}

// hasBinding reports whether bs holds a binding with b's keys.
func hasBinding(bs []key.Binding, b key.Binding) bool {
	return slices.ContainsFunc(bs, func(c key.Binding) bool { return slices.Equal(c.Keys(), b.Keys()) })
}

// Every binding of a key map has an action and a place in its ? screen: a key added to the map
// and forgotten in the help fails here.
func TestEveryBindingIsInHelp(t *testing.T) {
	lk := defaultLabKeys()
	k := lk.KeyMap
	w := watchKeys{DefaultWatchKeyMap(), common.DefaultScrollKeys(), nil}
	scroll := ([]keyAction)(nil) // the scroll keys are matched by the pane that scrolls (common.ScrollKeys.Scroll)
	for _, tc := range []struct {
		name    string
		km      any
		full    [][]key.Binding
		actions []keyAction // nil: a pane that matches its keys in its Update
	}{
		{"lab", k, lk.FullHelp(), append(k.actions(), commandActions(k)...)},
		{"lab's outbox", lk.scroll, lk.FullHelp(), scroll},
		{"lab's diagram", lk.diagram, lk.FullHelp(), nil},
		{"lab's workers", lk.workers, lk.FullHelp(), nil},
		{"watch", w.WatchKeyMap, w.FullHelp(), w.actions()},
		{"watch's outbox", w.scroll, w.FullHelp(), scroll},
	} {
		all := slices.Concat(tc.full...)
		var acts []key.Binding
		for _, ka := range tc.actions {
			acts = append(acts, ka.binding)
		}
		for name, b := range bindingsOf(tc.km) {
			if !hasBinding(all, b) {
				t.Errorf("%s: %s (%s) is not on the ? screen (FullHelp)", tc.name, name, b.Help().Key)
			}
			if tc.actions != nil && !hasBinding(acts, b) {
				t.Errorf("%s: %s (%s) has no action", tc.name, name, b.Help().Key)
			}
			if b.Help().Key == "" || b.Help().Desc == "" {
				t.Errorf("%s: %s has no help", tc.name, name)
			}
		}
	}
	// The ? screen draws what FullHelp holds, with every key of a single binding: ctrl+c too.
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("?")
	l.must("q/ctrl+c quit", "shift+tab previous scenario", "esc close", "e run to the end")
	// The footer's keys are bindings of the map.
	for _, b := range lk.ShortHelp() {
		if !hasBinding(slices.Concat(lk.FullHelp()...), b) {
			t.Errorf("footer key %s is not in the map's help", b.Help().Key)
		}
	}
}

// keyHint finds a key named by hand in a string: "press r", "g stops", "(tab)", "x r z f + keep".
var keyHint = regexp.MustCompile(`\bpress [^%\s]|(^|[\s(;,])(space|tab|esc|shift\+tab|ctrl\+c|[a-zA-Z+?<>=]) ` +
	`(stops|starts|steps|restarts|wakes|tries|opens|shows|hides|pauses|resumes|quits|plays|moves|runs|change|keep|crashes|slower|faster|select)\b|` +
	`\((tab|esc|[a-zA-Z+?<>])\)|\b1–[0-9%]|←→|↑ ?↓`)

// No string of the ui package names a key by hand: every key name comes from the KeyMap (only
// the files that define the bindings and their help spell them).
func TestNoKeyNamedByHand(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		// The files that define bindings (the shell's keys.go, a pane's *_keys.go) spell them.
		if strings.HasSuffix(f, "_test.go") || f == "keys_state.go" || definesBindings(t, f) {
			continue
		}
		for _, hit := range keyHintsIn(t, f) {
			t.Errorf("%s: a key named by hand: %s", f, hit)
		}
	}
	// The check finds the hints the lab had before the key map named them.
	for _, old := range []string{`"press r to restart it"`, `"(< >, g stops)"`, `"scenario %d/%d (tab)"`,
		`"x r z f + keep working"`, `"1–%d or ←→ select"`, `"(↑↓ pgup pgdn scroll)"`, `"About this scenario (i hides)"`} {
		if !keyHint.MatchString(mustUnquote(t, old)) {
			t.Errorf("the check misses %s", old)
		}
	}
}

// definesBindings reports whether file f makes key bindings (key.NewBinding).
func definesBindings(t *testing.T, f string) bool {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), "key.NewBinding(")
}

// keyHintsIn returns the string literals of file f that name a key by hand, with their line.
func keyHintsIn(t *testing.T, f string) []string {
	t.Helper()
	fs := token.NewFileSet()
	file, err := parser.ParseFile(fs, f, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var hits []string
	ast.Inspect(file, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if s := mustUnquote(t, lit.Value); keyHint.MatchString(s) {
			hits = append(hits, fs.Position(lit.Pos()).String()+" "+lit.Value)
		}
		return true
	})
	return hits
}

func mustUnquote(t *testing.T, s string) string {
	t.Helper()
	u, err := strconv.Unquote(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// commandActions are the lab's command keys (KeyMap.commands) as bindings with an action, for
// the check that every binding does something.
func commandActions(k KeyMap) []keyAction {
	var kas []keyAction
	for _, ck := range k.commands() {
		kas = append(kas, keyAction{binding: ck.binding})
	}
	return kas
}
