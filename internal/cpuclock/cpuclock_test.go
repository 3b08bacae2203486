//go:build unix

package cpuclock_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/cpuclock"
)

var sink uint64

// Work moves the clock on.
func TestNowGrowsWithWork(t *testing.T) {
	is := is.New(t)
	start := cpuclock.Now()
	is.True(start > 0) // the process has run
	x := uint64(1)
	for i := range uint64(50_000_000) {
		x = x*6364136223846793005 + i
	}
	sink = x
	is.True(cpuclock.Now() > start) // the work counted
}
