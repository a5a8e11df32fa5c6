//go:build !race

package engine_test

// raceEnabled is whether the race detector is on.
const raceEnabled = false
