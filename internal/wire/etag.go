// Package wire is the entity tag of the /v1/integration interface's read
// of a prompt in an environment: httpapi sends it, the client reads the
// prompt's revision from it. (The JSON of the interface is package api's.)
package wire

import (
	"math"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
)

// ParseETag reads a tag that AppendETag made, quoted, and returns the
// prompt id, environment and revision it names; ok is false for any other
// text, a tag of another Form included. The version a tag of a split
// names is ParseETagVersion's.
func ParseETag(tag string) (promptID string, env prompts.Environment, revision int64, ok bool) {
	promptID, env, revision, _, ok = ParseETagVersion(tag)
	return promptID, env, revision, ok
}

// ParseETagVersion is ParseETag, and returns too the number of the
// version served that the tag of an environment holding a split names (0
// for a tag that names none).
func ParseETagVersion(tag string) (promptID string, env prompts.Environment, revision int64, version int, ok bool) {
	if len(tag) < 2 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		return "", "", 0, 0, false
	}
	form, rest, _ := strings.Cut(tag[1:len(tag)-1], "-")
	if form != strconv.Itoa(Form) {
		return "", "", 0, 0, false
	}
	promptID, rest, _ = strings.Cut(rest, "-")
	// The environment may hold '-': the revision follows the last one,
	// or the one before the version ("-v3"), which no revision is.
	i := strings.LastIndexByte(rest, '-')
	if i >= 0 && strings.HasPrefix(rest[i+1:], "v") {
		n, err := strconv.Atoi(rest[i+2:])
		if err != nil || n < 1 || n > math.MaxInt32 || rest[i+2] == '0' || rest[i+2] == '+' {
			return "", "", 0, 0, false
		}
		version, rest = n, rest[:i]
		i = strings.LastIndexByte(rest, '-')
	}
	if i < 0 {
		return "", "", 0, 0, false
	}
	e, rev := rest[:i], rest[i+1:]
	revision, err := strconv.ParseInt(rev, 10, 64)
	if err != nil || revision <= 0 || !prompts.ValidID(promptID) || prompts.Environment(e).Validate() != nil {
		return "", "", 0, 0, false
	}
	return promptID, prompts.Environment(e), revision, version, true
}

// Form is the form of the interface's bodies, the first part of every
// entity tag. A release that changes the body of a read whose data did not
// change (a field added to a version, say) moves it on, so that a client
// does not keep a body of the old form on a 304.
const Form = 1

// AppendETag appends the strong entity tag of a's representation, quoted:
// the Form, the prompt's id, the environment and the prompt's revision, as
// in "1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456"; when the
// environment holds a split, then the number of the version served, as in
// "1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456-v3". The
// representation of a prompt in an environment is a function of those:
// the revision grows with every change to the prompt, its versions and
// what its environments point at, and of a split each subject is served
// one of its versions, whose body the version names. So the tag changes
// exactly when the body may, costs no pass over the body (a 304 is
// answered before any encoding), and names the prompt and the
// environment, so that a tag of one never matches another.
func AppendETag(b []byte, a prompts.ActivePrompt) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, Form, 10)
	b = append(b, '-')
	b = append(b, a.ID...)
	b = append(b, '-')
	b = append(b, a.Environment...)
	b = append(b, '-')
	b = strconv.AppendInt(b, a.Revision, 10)
	if a.Split != nil && a.ActiveVersion != nil {
		b = append(b, '-', 'v')
		b = strconv.AppendInt(b, int64(a.ActiveVersion.VersionNumber), 10)
	}
	return append(b, '"')
}
