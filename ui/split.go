package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
)

// Splits, as the pages say them: "versions 3 (90%) and 4 (10%)", each
// version with its share of subjects (its weight over the sum of the
// weights).

// splitText says a split for people: "versions 3 (90%) and 4 (10%)",
// "versions 3 (50%), 4 (30%) and 5 (20%)".
func splitText(s prompts.Split) string {
	parts := make([]string, len(s))
	for i := range s {
		parts[i] = strconv.Itoa(s[i].VersionNumber) + " (" + sharePercent(s, i) + ")"
	}
	if len(parts) < 2 {
		return "version " + strings.Join(parts, "")
	}
	return "versions " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// served says what an environment serves (or served) for people: the
// split's versions with their shares, else the version numbered n, else
// none.
func served(s prompts.Split, n *int, none string) string {
	switch {
	case len(s) > 0:
		return splitText(s)
	case n != nil:
		return "version " + strconv.Itoa(*n)
	}
	return none
}

// sharePercent returns entry i's share of subjects in s, as a percentage.
func sharePercent(s prompts.Split, i int) string {
	total := 0
	for _, e := range s {
		total += e.Weight
	}
	return prompts.SharePercent(s[i].Weight, total)
}

// splitRow is one row of the promote form's split: a version number (0:
// none chosen) and its weight as typed.
type splitRow struct {
	Version int
	Weight  string
}

// Share is the row's share of subjects among rows, as a percentage, or
// "" while the rows do not make a split yet.
func (r splitRow) Share(rows []splitRow) string {
	w, err := strconv.Atoi(r.Weight)
	if r.Version == 0 || err != nil || w < 1 {
		return ""
	}
	total := 0
	for _, o := range rows {
		if o.Version == 0 && o.Weight == "" {
			continue // an empty row: left out
		}
		ow, err := strconv.Atoi(o.Weight)
		if o.Version == 0 || err != nil || ow < 1 || ow > prompts.MaxSplitWeight {
			return ""
		}
		total += ow
	}
	return prompts.SharePercent(w, total)
}

// splitRows are the rows the promote form offers: the rows given, then
// one empty row, at least minSplitRows and at most
// prompts.MaxSplitVersions in all.
func splitRows(given []splitRow) []splitRow {
	n := min(max(len(given)+1, minSplitRows), prompts.MaxSplitVersions)
	rows := make([]splitRow, n)
	copy(rows, given)
	return rows
}

// minSplitRows is how many rows the split form shows at least.
const minSplitRows = 3

// readSplitRows reads the split rows of the promote form (split.N.version
// and split.N.weight, N from 1) as typed, up to the last that holds
// something, and what is wrong with them, by row; shown is how many rows
// the form had (the last N it sent).
func (c *call) readSplitRows() (rows []splitRow, problems []string, shown int) {
	last := 0
	for i := 1; i <= prompts.MaxSplitVersions; i++ {
		v := strings.TrimSpace(c.form("split." + strconv.Itoa(i) + ".version"))
		w := strings.TrimSpace(c.form("split." + strconv.Itoa(i) + ".weight"))
		r := splitRow{Weight: w}
		if v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				problems = append(problems, fmt.Sprintf("entry %d: the version %q is not a version number", i, v))
			}
			r.Version = n
		}
		switch {
		case v == "" && w != "":
			problems = append(problems, fmt.Sprintf("entry %d has a weight but no version: choose one, or clear the weight", i))
		case v != "" && w == "":
			problems = append(problems, fmt.Sprintf("entry %d needs a weight", i))
		case w != "":
			if n, err := strconv.Atoi(w); err != nil || n < 1 || n > prompts.MaxSplitWeight {
				problems = append(problems, fmt.Sprintf("entry %d: the weight must be a whole number from 1 to %d", i, prompts.MaxSplitWeight))
			}
		}
		rows = append(rows, r)
		if v != "" || w != "" {
			last = i
		}
		if _, ok := c.r.PostForm["split."+strconv.Itoa(i)+".version"]; ok {
			shown = i
		}
	}
	return rows[:last], problems, shown
}

// splitOf returns the split the rows make, leaving out empty rows, and
// for each of its entries the row it came from (numbered from 1).
func splitOf(rows []splitRow) (prompts.Split, []int) {
	split := prompts.Split{}
	var from []int
	for i, r := range rows {
		if r.Version == 0 {
			continue
		}
		w, _ := strconv.Atoi(r.Weight)
		split = append(split, prompts.Share{VersionNumber: r.Version, Weight: w})
		from = append(from, i+1)
	}
	return split, from
}

// rowsOf returns the rows of a split, to offer it for a change.
func rowsOf(s prompts.Split) []splitRow {
	rows := make([]splitRow, len(s))
	for i, e := range s {
		rows[i] = splitRow{Version: e.VersionNumber, Weight: strconv.Itoa(e.Weight)}
	}
	return rows
}
