package diagram

import "github.com/charmbracelet/bubbles/key"

// Keys are the space-time diagram's keys.
type Keys struct {
	Toggle  key.Binding
	Earlier key.Binding // on while the diagram is shown
	Later   key.Binding
}

// DefaultKeys returns the diagram's keys, its scroll keys off until t shows it.
func DefaultKeys() Keys {
	b := func(k, desc string) key.Binding { return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc)) }
	k := Keys{
		Toggle:  b("t", "diagram on/off"),
		Earlier: b("{", "earlier in the diagram"),
		Later:   b("}", "later in the diagram"),
	}
	k.Earlier.SetEnabled(false)
	k.Later.SetEnabled(false)
	return k
}
