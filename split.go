package prompts

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
)

// SplitPoint returns where a subject falls in a split of a prompt's
// environment: the first 8 bytes of the SHA-256 of
//
//	prompt_id + "\n" + environment + "\n" + subject
//
// read as a big-endian unsigned integer x; the subject's point in [0, 1)
// is x / 2^64. The same subject always falls at the same point, so a
// split is sticky per subject, and two prompts or two environments split
// independently. docs/environments.md gives the formula with test vectors
// for other languages.
func SplitPoint(promptID string, env Environment, subject string) uint64 {
	// A buffer on the stack for the usual sizes (a ULID, a short
	// environment, a subject of up to ~180 bytes), so a pick allocates
	// nothing.
	var arr [256]byte
	b := append(arr[:0], promptID...)
	b = append(b, '\n')
	b = append(b, env...)
	b = append(b, '\n')
	b = append(b, subject...)
	sum := sha256.Sum256(b)
	return binary.BigEndian.Uint64(sum[:8])
}

// SplitEntry returns the index of the entry of a split, given its
// weights in the order of the split, that owns the point x (see
// SplitPoint): the entries own consecutive shares of [0, 1), each
// weight / sum of weights, in turn. In integers, so that every
// implementation picks alike: with W the sum of the weights, the entry is
// the first i with floor(x·W / 2^64) < weights[0] + … + weights[i].
// Weights are positive; with none it returns -1.
func SplitEntry(x uint64, weights []int) int {
	var total uint64
	for _, w := range weights {
		total += uint64(w)
	}
	if total == 0 {
		return -1
	}
	t, _ := bits.Mul64(x, total) // floor(x·W / 2^64)
	var cum uint64
	for i, w := range weights {
		cum += uint64(w)
		if t < cum {
			return i
		}
	}
	return len(weights) - 1 // unreachable: t < W
}

// The bounds of a split.
const (
	MinSplitVersions = 2     // a split serves at least two versions
	MaxSplitVersions = 10    // and at most ten
	MaxSplitWeight   = 10000 // each with a weight of 1 to 10000
)

// Share is one entry of a split: a version and its weight. In an
// Activation it names its version by id or by number, exactly one of the
// two; in what a Store returns it has both.
type Share struct {
	VersionID     string
	VersionNumber int
	Weight        int
}

// Split is what an environment of a prompt serves when it holds a split:
// each version to a share of subjects (its Weight / the sum of the
// weights), the entries owning consecutive shares of [0, 1) in the order
// given. Which version a subject gets is SplitPoint and SplitEntry, the
// formula docs/environments.md publishes, so that a server, a cache and a
// client pick alike. A read without a subject gets the first entry's
// version.
type Split []Share

// Entry returns the index of the entry that serves subject in the split
// of prompt promptID's environment env (SplitPoint, then SplitEntry of
// the weights); -1 for an empty split. It allocates nothing.
func (s Split) Entry(promptID string, env Environment, subject string) int {
	if len(s) == 0 {
		return -1
	}
	x := SplitPoint(promptID, env, subject)
	var total uint64
	for _, e := range s {
		total += uint64(e.Weight)
	}
	t, _ := bits.Mul64(x, total)
	var cum uint64
	for i, e := range s {
		cum += uint64(e.Weight)
		if t < cum {
			return i
		}
	}
	return len(s) - 1
}

// Equal reports whether s and o are the same split: the same versions
// (by id), weights and order.
func (s Split) Equal(o Split) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i].VersionID != o[i].VersionID || s[i].Weight != o[i].Weight {
			return false
		}
	}
	return true
}

// check adds to fe what breaks the rules of a split given as input:
// MinSplitVersions to MaxSplitVersions entries, each naming its version
// by id or by number (one of the two) with a weight of 1 to
// MaxSplitWeight, no version named twice. A version named once by id and
// once by number is found by the Store, which resolves them.
func (s Split) check(fe *fieldErrors) {
	if len(s) < MinSplitVersions || len(s) > MaxSplitVersions {
		fe.add("split", "must have 2 to 10 entries, each a different version of the prompt")
		return
	}
	ids := make(map[string]bool, len(s))
	numbers := make(map[int]bool, len(s))
	for i, e := range s {
		f := "split[" + strconv.Itoa(i) + "]"
		switch {
		case e.VersionID != "" && e.VersionNumber != 0:
			fe.add(f+".version_id", "and version_number cannot both be given: give one")
		case e.VersionID != "":
			checkRef(fe, f+".version_id", e.VersionID, true)
			if ids[e.VersionID] {
				fe.add(f+".version_id", "names a version named before: each entry names a different version")
			}
			ids[e.VersionID] = true
		case e.VersionNumber < 0 || e.VersionNumber > math.MaxInt32:
			fe.add(f+".version_number", "must be 1 to 2147483647")
		case e.VersionNumber == 0:
			fe.add(f+".version_id", "or version_number is required")
		default:
			if numbers[e.VersionNumber] {
				fe.add(f+".version_number", "names a version named before: each entry names a different version")
			}
			numbers[e.VersionNumber] = true
		}
		if e.Weight < 1 || e.Weight > MaxSplitWeight {
			fe.add(f+".weight", "must be 1 to 10000")
		}
	}
}

// Clone returns a copy of s that shares nothing with it (nil for nil).
func (s Split) Clone() Split { return slices.Clone(s) }

// SharePercent returns weight / total as a percentage for people, to a
// hundredth at most: "90%", "33.33%", "12.5%"; a share that rounds to 0
// or to 100 without being it says so ("<0.01%", ">99.99%"); "?" when
// total is not positive. The command line and the web interface show a
// split's shares with it.
func SharePercent(weight, total int) string {
	if total <= 0 {
		return "?"
	}
	h := (weight*20000 + total) / (2 * total) // hundredths of a percent, rounded
	switch {
	case h == 0 && weight > 0:
		return "<0.01%"
	case h == 10000 && weight < total:
		return ">99.99%"
	}
	out := strconv.Itoa(h / 100)
	if frac := h % 100; frac != 0 {
		out += "." + strconv.Itoa(frac/10)
		if frac%10 != 0 {
			out += strconv.Itoa(frac % 10)
		}
	}
	return out + "%"
}
