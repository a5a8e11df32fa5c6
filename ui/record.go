package ui

import "leaselab/ui/diagram"

// What drives the lab from outside a terminal needs to know between two keys (leaselab run
// --cast presses space and records each screen): whether the run is over, whether a question
// waits for its answer, and what the space-time diagram (t) would draw.

// Over reports whether the open scenario's run has reached its end (its verdict is on screen)
// and no engine command is in flight.
func (m Model) Over() bool { return m.frame != nil && m.frame.Done && !m.busy }

// Asking reports whether a question of the script waits for its answer.
func (m Model) Asking() bool { return m.ask.Open != nil }

// DiagramInput is what the space-time diagram (t) draws of the run so far, at the pane's size.
func (m Model) DiagramInput() diagram.Input { return m.diagram.Input(m.scene()) }
