package ui

// toggleKey is the key of toggle name, from the key map. (The key map's branch, stage-keys,
// has its own toggleKey in help.go: when both meet, this file goes and that one stays.)
func (m Model) toggleKey(name string) string {
	if b, ok := m.toggleBinding(name); ok {
		return b.Help().Key
	}
	return toggles[name].key
}
