//go:build race

package browsertest

func init() { raceEnabled = true }
