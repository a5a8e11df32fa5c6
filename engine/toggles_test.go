package engine_test

import (
	"reflect"
	"slices"
	"testing"

	"leaselab/engine"
)

// Every toggle of the registry is its own: a name, a key, a letter and a Settings field no other
// toggle has, and Set and Get reach that field alone.
func TestToggleRegistry(t *testing.T) {
	seen := map[string]string{}
	unique := func(what, v, name string) {
		t.Helper()
		if v == "" {
			t.Errorf("%s: no %s", name, what)
		}
		if other, ok := seen[what+v]; ok {
			t.Errorf("%s %q of %s is %s's too", what, v, name, other)
		}
		seen[what+v] = name
	}
	fields := map[int]string{}
	for i, tg := range engine.Registry() {
		unique("name", tg.Name, tg.Name)
		// The lab's toggles come first, NumToggles of them; every toggle has a lab key.
		if lab := i < engine.NumToggles; lab != (tg.Where == engine.InLab) {
			t.Errorf("%s (entry %d): Where %v; want the first %d, and only they, InLab", tg.Name, i, tg.Where, engine.NumToggles)
		}
		unique("key", tg.Key, tg.Name)
		unique("letter", tg.Letter, tg.Name)
		if tg.Words == "" || tg.Short == "" || tg.Tiny == "" || tg.On == "" || tg.Off == "" {
			t.Errorf("%s: words missing: %+v", tg.Name, tg)
		}
		if got, ok := engine.LookupToggle(tg.Name); !ok || got.Name != tg.Name {
			t.Errorf("LookupToggle(%q) = %q, %v", tg.Name, got.Name, ok)
		}
		var s engine.Settings
		if err := s.Set(tg.Name, true); err != nil {
			t.Fatal(err)
		}
		if on, err := s.Get(tg.Name); err != nil || !on || !tg.Of(s) {
			t.Errorf("%s: set on, reads %v (%v), Of %v", tg.Name, on, err, tg.Of(s))
		}
		v := reflect.ValueOf(s)
		var set []int
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				set = append(set, i)
			}
		}
		if len(set) != 1 {
			t.Errorf("%s: Set changed fields %v of Settings, want one", tg.Name, set)
			continue
		}
		if other, ok := fields[set[0]]; ok {
			t.Errorf("%s and %s switch the same field %s", tg.Name, other, v.Type().Field(set[0]).Name)
		}
		fields[set[0]] = tg.Name
		if on, _ := engine.DefaultSettings().Get(tg.Name); on != tg.Default {
			t.Errorf("%s: DefaultSettings has it %v, the registry %v", tg.Name, on, tg.Default)
		}
	}
	if len(engine.Registry()) != engine.NumRegistry {
		t.Errorf("Registry has %d, NumRegistry says %d", len(engine.Registry()), engine.NumRegistry)
	}
	if len(engine.Toggles()) != engine.NumToggles {
		t.Errorf("Toggles has %d, NumToggles says %d", len(engine.Toggles()), engine.NumToggles)
	}
	all := engine.AllToggleNames()
	if len(all) != len(engine.Toggles()) {
		t.Errorf("AllToggleNames %v: not every toggle", all)
	}
	for _, name := range engine.ToggleNames() {
		if tg, _ := engine.LookupToggle(name); tg.RowLocks {
			t.Errorf("ToggleNames lists %s, which only a database with row locks has", name)
		}
	}
	if _, ok := engine.LookupToggle("no-such"); ok {
		t.Error("LookupToggle found a toggle that is not declared")
	}
	// The registry hands out copies: changing one does not change the toggle.
	ts := engine.Toggles()
	ts[0].Name = "changed"
	if slices.Contains(engine.AllToggleNames(), "changed") {
		t.Error("a caller changed the registry")
	}
}

// The lists keep the order the scenario files, reports and error messages have always used (a
// new toggle may come in anywhere), the toggles every backend has first.
func TestToggleNamesOrder(t *testing.T) {
	inOrder := func(got, want []string) bool {
		i := 0
		for _, g := range got {
			if i < len(want) && g == want[i] {
				i++
			}
		}
		return i == len(want)
	}
	want := []string{"leasing", "atomic-claim", "ownership-check", "fencing", "heartbeat", "skip-locked"}
	if got := engine.AllToggleNames(); !inOrder(got, want) {
		t.Errorf("AllToggleNames = %v, want %v in this order", got, want)
	}
	every := engine.ToggleNames()
	if got := engine.AllToggleNames(); !slices.Equal(got[:len(every)], every) {
		t.Errorf("AllToggleNames = %v, want ToggleNames %v first", got, every)
	}
}
