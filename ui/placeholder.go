// Package ui is the lab: a Bubble Tea screen that steps the engine.
package ui

import "errors"

// Placeholder stands in for the lab until it is built.
func Placeholder() error { return errors.New("the lab is not built yet: use leaselab run") }
