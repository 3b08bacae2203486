package memstore

import (
	"iter"
	"slices"
	"strconv"

	"github.com/promptkit/prompts"
)

// What an environment of a prompt points at is a pointer: one version, a
// split of several, or nothing. A read of a prompt without splits costs
// what it did when a pointer was a version number: the split is one nil
// pointer beside it.

// pointer is what an environment of a prompt points at.
type pointer struct {
	n     int        // the version served without a subject: the one version, or the split's first entry's; 0 for none
	split *heldSplit // the split held; nil when none
}

// heldSplit is a split an environment holds, resolved (each entry with
// its version's id and number), with the versions of its entries in its
// order. Reads answer both as they are (versions never change), so
// neither is changed once made: a change makes a new one.
type heldSplit struct {
	split    prompts.Split
	versions []prompts.PromptVersion
}

// hold returns the pointer of the resolved split sp, whose numbers are
// versions of rec.
func (rec *prompt) hold(sp prompts.Split) pointer {
	h := &heldSplit{split: sp.Clone(), versions: make([]prompts.PromptVersion, len(sp))}
	for i, e := range sp {
		h.versions[i] = rec.versions[e.VersionNumber-1]
	}
	return pointer{n: sp[0].VersionNumber, split: h}
}

// resolved reports whether every entry of sp names a version of rec by
// its number and id, as a held split's entries do.
func (rec *prompt) resolved(sp prompts.Split) bool {
	for _, e := range sp {
		if e.VersionNumber < 1 || e.VersionNumber > len(rec.versions) || rec.versions[e.VersionNumber-1].ID != e.VersionID {
			return false
		}
	}
	return len(sp) > 0
}

// equal reports whether p and o point at the same: the same version, or
// the same split (prompts.Split.Equal), or both at nothing.
func (p pointer) equal(o pointer) bool {
	if p.split == nil || o.split == nil {
		return p.split == nil && o.split == nil && p.n == o.n
	}
	return p.split.split.Equal(o.split.split)
}

// numbers yields the numbers of the versions p serves: none, its one
// version, or each entry's of its split, in order.
func (p pointer) numbers() iter.Seq[int] {
	return func(yield func(int) bool) {
		if p.split == nil {
			if p.n != 0 {
				yield(p.n)
			}
			return
		}
		for _, e := range p.split.split {
			if !yield(e.VersionNumber) {
				return
			}
		}
	}
}

// serves reports whether p serves version n: its one version, or an
// entry of its split.
func (p pointer) serves(n int) bool {
	for m := range p.numbers() {
		if m == n {
			return true
		}
	}
	return false
}

// splitOf returns the split p holds, nil when none.
func (p pointer) splitOf() prompts.Split {
	if p.split == nil {
		return nil
	}
	return p.split.split
}

// target returns what in points env at: the version it names, or the
// split it gives, resolved. A version the prompt does not have is
// ErrNotFound; a split that names one version twice (once by id, once by
// number: Validate finds the rest) is ErrInvalid at the entry that names
// it again.
func (rec *prompt) target(in prompts.Activation) (pointer, error) {
	if in.Split == nil {
		n := rec.number(in.VersionID.Value, in.VersionNumber.Value)
		if n == 0 {
			return pointer{}, prompts.NotFound("version")
		}
		return pointer{n: n}, nil
	}
	sp := make(prompts.Split, len(in.Split))
	for i, e := range in.Split {
		n := rec.number(e.VersionID, e.VersionNumber)
		if n == 0 {
			return pointer{}, prompts.NotFound("version")
		}
		if j := slices.IndexFunc(sp[:i], func(s prompts.Share) bool { return s.VersionNumber == n }); j >= 0 {
			field := "split[" + strconv.Itoa(i) + "].version_number"
			if e.VersionID != "" {
				field = "split[" + strconv.Itoa(i) + "].version_id"
			}
			return pointer{}, prompts.Invalid(field, "names the version split["+strconv.Itoa(j)+"] names: each entry names a different version")
		}
		sp[i] = prompts.Share{VersionID: rec.versions[n-1].ID, VersionNumber: n, Weight: e.Weight}
	}
	return rec.hold(sp), nil
}

// number returns the number of the version with this id, when id is not
// "", else of number n; 0 when the prompt has no such version.
func (rec *prompt) number(id string, n int) int {
	if id != "" {
		for i := range rec.versions {
			if rec.versions[i].ID == id {
				return i + 1
			}
		}
		return 0
	}
	if n >= 1 && n <= len(rec.versions) {
		return n
	}
	return 0
}

// partials returns the keys of the partials the versions of p include,
// sorted, each once.
func (rec *prompt) partials(p pointer) []string {
	if p.split == nil {
		if p.n == 0 {
			return nil
		}
		return rec.versions[p.n-1].Partials
	}
	var keys []string
	for n := range p.numbers() {
		keys = append(keys, rec.versions[n-1].Partials...)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
