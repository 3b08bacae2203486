package prompts

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
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
