//go:build !race

package services

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = false
