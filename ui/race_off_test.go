//go:build !race

package ui

// raceEnabled is whether the race detector is on (it slows rendering down many times).
const raceEnabled = false
