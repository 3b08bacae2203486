//go:build race

package testbin

// Race reports whether the tests run with the race detector; Build then
// builds the commands with it too.
const Race = true
