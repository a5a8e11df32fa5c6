package ui

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"

	"leaselab/engine"
	"leaselab/ui/common"
)

// The key map follows the lab's state: a binding that does not apply now is disabled, so that
// the footer and the ? screen leave it out and a press of it says why it does nothing (whyOff).

// setOverlay switches esc on while the ? screen or the explanation is open.
func (k *KeyMap) setOverlay(open bool) { k.Close.SetEnabled(open) }

// sessionKeys are the keys that need an open session. The toggles only a database with row
// locks has are not among them, nor those of a lesson's run: setRowLocks and setLessonToggles
// switch those.
func (k *KeyMap) sessionKeys() []*key.Binding {
	bs := []*key.Binding{&k.Step}
	for i, t := range engine.Toggles() {
		if !t.RowLocks {
			bs = append(bs, &k.Toggles[i])
		}
	}
	return append(bs, &k.Clock, &k.PastLease, &k.Play, &k.Free, &k.Finish, &k.Slower, &k.Faster)
}

// setRowLocks switches on the keys of the toggles only a database with row locks has, while the
// lab's database is one.
func (k *KeyMap) setRowLocks(on bool) {
	for i, t := range engine.Toggles() {
		if t.RowLocks {
			k.Toggles[i].SetEnabled(on)
		}
	}
}

// setLessonToggles switches on the keys of the toggles of the registry's other groups
// (InRetries, InRescue) that are named (a frame's LessonToggles), and off the others.
func (k *KeyMap) setLessonToggles(names []string) {
	for i, t := range engine.Registry() {
		if t.Where != engine.InLab {
			k.Toggles[i].SetEnabled(slices.Contains(names, t.Name))
		}
	}
}

// needsSession reports whether act's key is one of sessionKeys.
func (k KeyMap) needsSession(act action) bool {
	for _, ka := range k.actions() {
		if ka.act == act {
			return slices.ContainsFunc(k.sessionKeys(), func(b *key.Binding) bool { return slices.Equal(b.Keys(), ka.binding.Keys()) })
		}
	}
	return false
}

// setSession switches off the keys that need an open session (after a scenario failed to open).
func (k *KeyMap) setSession(open bool) {
	for _, b := range k.sessionKeys() {
		b.SetEnabled(open)
	}
	if open {
		k.setRunning()
	}
}

// setFree switches the keys between stepping and free-running: while the workers run on their
// own, nothing may step them (space, s, p and e are off), g stops them and < > set their pace.
func (k *KeyMap) setFree(on bool) {
	k.free = on
	k.setRunning()
	if on {
		k.Free.SetHelp(common.KeyName(k.Free), "stop free run")
		k.Slower.SetHelp(common.KeyName(k.Slower), "slower pace")
		k.Faster.SetHelp(common.KeyName(k.Faster), "faster pace")
		return
	}
	k.Free.SetHelp(common.KeyName(k.Free), "free-run on/off")
	k.Slower.SetHelp(common.KeyName(k.Slower), "slower")
	k.Faster.SetHelp(common.KeyName(k.Faster), "faster")
}

// setFinishing switches the keys while e runs the scenario to its end: e stops it, and the
// step, play and free-run keys are off.
func (k *KeyMap) setFinishing(on bool) {
	k.finishing = on
	k.setRunning()
	if on {
		k.Finish.SetHelp(common.KeyName(k.Finish), "stop running to the end")
		return
	}
	k.Finish.SetHelp(common.KeyName(k.Finish), "run to the end at full speed")
}

// setRunning enables the step keys unless the workers free-run or e runs to the end.
func (k *KeyMap) setRunning() {
	busy := k.free || k.finishing
	for _, b := range []*key.Binding{&k.Step, &k.Play} {
		b.SetEnabled(!busy)
	}
	k.Free.SetEnabled(!k.finishing)
	k.Finish.SetEnabled(!k.free)
}
