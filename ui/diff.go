package ui

import (
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// diffLine is one line of a line-by-line difference.
type diffLine struct {
	Kind string // "add", "del" or "same"
	Old  int    // its number in the older text; 0 for an added line
	New  int    // its number in the newer text; 0 for a removed line
	Text string // without its line end
}

// Added and Removed tell templates what the line is.
func (l diffLine) Added() bool   { return l.Kind == "add" }
func (l diffLine) Removed() bool { return l.Kind == "del" }

// lineDiff returns the whole of b, line by line, with the lines a had and
// b has not interleaved where they were: every line of both, marked.
// The differences are gopls's (go-udiff, its exported copy): a
// well-tried algorithm, not one of our own.
func lineDiff(a, b string) (lines []diffLine, added, removed int) {
	edits := udiff.Lines(a, b)
	if len(edits) == 0 {
		for i, t := range splitLines(a) {
			lines = append(lines, diffLine{Kind: "same", Old: i + 1, New: i + 1, Text: t})
		}
		return lines, 0, 0
	}
	// Context as long as both texts: one hunk that holds every line.
	ctx := strings.Count(a, "\n") + strings.Count(b, "\n") + 2
	u, err := udiff.ToUnifiedDiff("a", "b", a, edits, ctx)
	if err != nil || len(u.Hunks) != 1 {
		// Not expected from edits udiff made itself; show b as it is,
		// after a wholesale removal of a, rather than nothing.
		for i, t := range splitLines(a) {
			lines = append(lines, diffLine{Kind: "del", Old: i + 1, Text: t})
		}
		for i, t := range splitLines(b) {
			lines = append(lines, diffLine{Kind: "add", New: i + 1, Text: t})
		}
		return lines, len(splitLines(b)), len(splitLines(a))
	}
	h := u.Hunks[0]
	oldN, newN := h.FromLine, h.ToLine
	for _, l := range h.Lines {
		t := strings.TrimSuffix(l.Content, "\n")
		switch l.Kind {
		case udiff.Delete:
			lines = append(lines, diffLine{Kind: "del", Old: oldN, Text: t})
			oldN++
			removed++
		case udiff.Insert:
			lines = append(lines, diffLine{Kind: "add", New: newN, Text: t})
			newN++
			added++
		default:
			lines = append(lines, diffLine{Kind: "same", Old: oldN, New: newN, Text: t})
			oldN++
			newN++
		}
	}
	return lines, added, removed
}

// splitLines splits s into lines without their line ends; a last line
// end starts no further line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
