package cache

import (
	"slices"

	"github.com/promptkit/prompts"
)

// copyActive is what a read hands out of the value the cache holds (see
// prompts.ActivePrompt.Copy): a's own copy. The copy of an environment
// that holds a split (its Split, the versions of its entries, their
// change summaries and up to four variables each, and the description)
// is made in one allocation, as the copy of one version is, so that a
// read that picks the version of a subject from memory costs what a
// plain hit costs (BENCHMARKS.md, "Splits").
func copyActive(a prompts.ActivePrompt) prompts.ActivePrompt {
	if a.Split == nil || len(a.SplitVersions) != len(a.Split) {
		return a.Copy()
	}
	n := len(a.Split)
	served := -1 // the entry whose version a serves
	for i := range a.SplitVersions {
		if a.ActiveVersion != nil && a.ActiveVersion.ID == a.SplitVersions[i].ID {
			served = i
			break
		}
	}
	split, versions, extras, desc := splitBlock(n)
	copy(split, a.Split)
	copy(versions, a.SplitVersions)
	for i := range versions {
		v, x := &versions[i], &extras[i]
		if v.ChangeSummary != nil {
			x.summary = *v.ChangeSummary
			v.ChangeSummary = &x.summary
		}
		switch k := len(v.Variables); {
		case v.Variables == nil: // as it was
		case k <= len(x.vars):
			v.Variables = x.vars[:copy(x.vars[:], v.Variables):k]
		default:
			v.Variables = slices.Clone(v.Variables)
		}
		if v.Partials != nil {
			v.Partials = slices.Clone(v.Partials) // no allocation when empty
		}
	}
	if a.Description != nil {
		*desc = *a.Description
		a.Description = desc
	}
	a.Split, a.SplitVersions = split, versions
	if served >= 0 {
		a.ActiveVersion = &versions[served]
	} else if a.ActiveVersion != nil { // not one of the split's: its own copy, as Copy makes
		a.ActiveVersion = prompts.ActivePrompt{ActiveVersion: a.ActiveVersion}.Copy().ActiveVersion
	}
	return a
}

// versionExtra holds the copies of what a version of a split points to.
type versionExtra struct {
	summary string
	vars    [4]string
}

// The blocks that hold the copy of a split, in one allocation: a block
// for up to two entries (the common A/B split), for up to four, and for
// up to prompts.MaxSplitVersions.
type (
	splitBlock2 struct {
		desc     string
		split    [2]prompts.Share
		versions [2]prompts.PromptVersion
		extras   [2]versionExtra
	}
	splitBlock4 struct {
		desc     string
		split    [4]prompts.Share
		versions [4]prompts.PromptVersion
		extras   [4]versionExtra
	}
	splitBlockMax struct {
		desc     string
		split    [prompts.MaxSplitVersions]prompts.Share
		versions [prompts.MaxSplitVersions]prompts.PromptVersion
		extras   [prompts.MaxSplitVersions]versionExtra
	}
)

// splitBlock returns the parts of a new block for a split of n entries,
// each of length and capacity n. A split of more than
// prompts.MaxSplitVersions entries, which no Store keeps, gets slices of
// its own.
func splitBlock(n int) ([]prompts.Share, []prompts.PromptVersion, []versionExtra, *string) {
	switch {
	case n <= 2:
		b := new(splitBlock2)
		return b.split[:n:n], b.versions[:n:n], b.extras[:n:n], &b.desc
	case n <= 4:
		b := new(splitBlock4)
		return b.split[:n:n], b.versions[:n:n], b.extras[:n:n], &b.desc
	case n <= prompts.MaxSplitVersions:
		b := new(splitBlockMax)
		return b.split[:n:n], b.versions[:n:n], b.extras[:n:n], &b.desc
	}
	return make([]prompts.Share, n), make([]prompts.PromptVersion, n), make([]versionExtra, n), new(string)
}
