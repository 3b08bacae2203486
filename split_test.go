package prompts_test

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// The vectors docs/environments.md publishes, so that other languages can
// check their implementation of the formula (computed independently of
// this code, with Python's hashlib).
func TestSplitVectors(t *testing.T) {
	is := is.New(t)
	const prompt = "01J9Z3K6Q2W8XN5T4V7B1C0D9E"
	for _, c := range []struct {
		env     prompts.Environment
		subject string
		point   uint64
		weights []int
		entry   int
	}{
		{"production", "user-1", 0xa9997ff9b300dcf5, []int{90, 10}, 0},
		{"staging", "user-1", 0xb9c8da7a5346ff84, []int{50, 50}, 1},
		{"production", "", 0x2f8f851e5d3997b1, []int{1, 1}, 0},
		{"production", "user-3", 0xfda34b4e556ef1d8, []int{90, 10}, 1},
		{"production", "user-0", 0x6354d09e11ee3fab, []int{1, 2, 3}, 1},
		{"production", "user-1", 0xa9997ff9b300dcf5, []int{1, 2, 3}, 2},
		{"canary", "user-2", 0xfb06dd2cdad33f0a, []int{3, 3, 3, 1}, 3},
		{"canary", "user-4", 0xe21f909fbb9e6e42, []int{3, 3, 3, 1}, 2},
		{"production", "\u00fc-\u00f1", 0x395927f169884b43, []int{9999, 1}, 0},
	} {
		x := prompts.SplitPoint(prompt, c.env, c.subject)
		is.Equal(x, c.point)                                // the point of (prompt, environment, subject)
		is.Equal(prompts.SplitEntry(x, c.weights), c.entry) // the entry that owns it
	}
	// A subject longer than the stack buffer hashes the same way.
	long := strings.Repeat("s", 1000)
	is.Equal(prompts.SplitPoint(prompt, "production", long), sha256Point(prompt+"\nproduction\n"+long))
}

func sha256Point(s string) uint64 {
	sum := sha256.Sum256([]byte(s))
	return binary.BigEndian.Uint64(sum[:8])
}

func TestSplitEntryShares(t *testing.T) {
	is := is.New(t)
	const max = ^uint64(0)
	is.Equal(prompts.SplitEntry(0, []int{1, 1}), 0)
	is.Equal(prompts.SplitEntry(max, []int{1, 1}), 1)
	is.Equal(prompts.SplitEntry(1<<63-1, []int{1, 1}), 0) // just below one half
	is.Equal(prompts.SplitEntry(1<<63, []int{1, 1}), 1)   // one half exactly: the second entry's share starts there
	is.Equal(prompts.SplitEntry(max, []int{10000, 1}), 1)
	is.Equal(prompts.SplitEntry(0, nil), -1)
	// Shares over many subjects are close to the weights.
	counts := make([]int, 3)
	const n = 30000
	for i := range n {
		counts[prompts.SplitEntry(prompts.SplitPoint("01J9Z3K6Q2W8XN5T4V7B1C0D9E", prompts.Production, strconv.Itoa(i)), []int{70, 20, 10})]++
	}
	for i, w := range []int{70, 20, 10} {
		want := n * w / 100
		is.True(counts[i] > want*95/100 && counts[i] < want*105/100) // within 5% of its share
	}
}

func TestSplitPointAllocatesNothing(t *testing.T) {
	is := is.New(t)
	allocs := testing.AllocsPerRun(100, func() {
		prompts.SplitEntry(prompts.SplitPoint("01J9Z3K6Q2W8XN5T4V7B1C0D9E", prompts.Production, "user-1"), []int{90, 10})
	})
	is.Equal(allocs, 0.0)
}

func BenchmarkSplitPick(b *testing.B) {
	w := []int{90, 10}
	for b.Loop() {
		prompts.SplitEntry(prompts.SplitPoint("01J9Z3K6Q2W8XN5T4V7B1C0D9E", prompts.Production, "user-12345"), w)
	}
}

func TestSharePercent(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		w, total int
		want     string
	}{
		{90, 100, "90%"}, {1, 3, "33.33%"}, {2, 3, "66.67%"}, {1, 8, "12.5%"}, {1, 1, "100%"}, {1, 20, "5%"}, {1, 16, "6.25%"},
		{1, 90001, "<0.01%"}, {99999, 100000, ">99.99%"}, {1, 0, "?"},
	} {
		is.Equal(prompts.SharePercent(c.w, c.total), c.want) // SharePercent(c.w, c.total)
	}
}
