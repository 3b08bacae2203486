// Package wire is the JSON of the /v1/integration interface: the bodies
// of its prompts, versions and projects, field for field, and the entity
// tag of a prompt's active-version read. httpapi writes its responses with
// it; storetest and the load harness use it to compare what they read with
// what the interface sends.
//
// The encoders are written by hand: they are on every read's hot path,
// their field sets are fixed (existing clients parse them), and
// encoding/json's reflection would cost several allocations a call. The
// domain types of package prompts carry plain struct tags instead, so that
// encoding/json of a value loses nothing.
package wire

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/promptkit/prompts"
)

// TimeFormat is the one timestamp format of the interface: RFC 3339 in UTC
// with exactly six fractional digits and a Z.
const TimeFormat = "2006-01-02T15:04:05.000000Z"

// AppendTime appends t in TimeFormat, quoted. It writes the digits
// itself, as time.Time.AppendFormat would but without reading a layout,
// since it is on the path of every read of a prompt, and leaves years
// outside 0 to 9999 to AppendFormat.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		b = append(b, '"')
		b = t.AppendFormat(b, TimeFormat)
		return append(b, '"')
	}
	hour, minute, sec := t.Clock()
	b = append(b, '"')
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, t.Nanosecond()/1000, 6)
	return append(b, 'Z', '"')
}

// appendDigits appends the n last decimal digits of v (0 <= v), with
// leading zeros.
func appendDigits(b []byte, v, n int) []byte {
	b = append(b, "000000"[:n]...)
	for i := len(b) - 1; i >= len(b)-n; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string. It escapes what JSON requires
// plus U+2028 and U+2029, and replaces invalid UTF-8 with U+FFFD, as
// encoding/json does (without its HTML escaping).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if n := plainWords(s[i:]); n > 0 {
			i += n
			if i == len(s) {
				break
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainWords returns the length of the longest prefix of s, in whole
// 8-byte words, of ASCII that a JSON string holds as is: no byte below
// 0x20, no quote, no backslash, none of 0x80 or above. It tests a word's
// bytes at once, so that the long plain runs of a prompt's text go at a
// word's pace rather than a byte's.
func plainWords(s string) int {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		_ = w[7] // one bounds check for the eight
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		// (v - ones*n) &^ v has a high bit set if and only if a byte of v
		// is below n (for n up to 0x80): with n = 1, if a byte is zero.
		quote, backslash := x^(ones*'"'), x^(ones*'\\')
		special := ((x - ones*0x20) &^ x) | ((quote - ones) &^ quote) | ((backslash - ones) &^ backslash)
		if (special|x)&high != 0 {
			break
		}
	}
	return i
}

// appendNullString appends s, or null when s is nil.
func appendNullString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return AppendString(b, *s)
}

// appendID appends an id, or null when it is empty.
func appendID(b []byte, id string) []byte {
	if id == "" {
		return append(b, "null"...)
	}
	return AppendString(b, id)
}

// AppendPrompt appends a prompt as the interface's create, update and list
// of prompts answer it: id, project_id, key, name, description,
// latest_version_id, created_at.
func AppendPrompt(b []byte, p prompts.Prompt) []byte {
	b = appendPromptHead(b, &p)
	b = append(b, `,"created_at":`...)
	b = AppendTime(b, p.CreatedAt)
	return append(b, '}')
}

// appendPromptHead appends every field of a prompt but created_at, leaving
// the object open.
func appendPromptHead(b []byte, p *prompts.Prompt) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, p.ID)
	b = append(b, `,"project_id":`...)
	b = AppendString(b, p.ProjectID)
	b = append(b, `,"key":`...)
	b = AppendString(b, p.Key)
	b = append(b, `,"name":`...)
	b = AppendString(b, p.Name)
	b = append(b, `,"description":`...)
	b = appendNullString(b, p.Description)
	b = append(b, `,"latest_version_id":`...)
	return appendID(b, p.LatestVersionID)
}

// AppendActive appends a prompt with the version active in one
// environment, as the read of a prompt answers it: the prompt's fields
// without created_at, and active_version (null when nothing is active),
// shaped as AppendVersion shapes it.
func AppendActive(b []byte, a prompts.ActivePrompt) []byte {
	b = appendPromptHead(b, &a.Prompt)
	b = append(b, `,"active_version":`...)
	if a.ActiveVersion == nil {
		b = append(b, "null"...)
	} else {
		b = AppendVersion(b, *a.ActiveVersion)
	}
	return append(b, '}')
}

// AppendVersion appends a version as creating one answers it: id,
// prompt_id, version_number, content, metadata_, created_at (no
// change_summary).
func AppendVersion(b []byte, v prompts.PromptVersion) []byte {
	b = appendVersionHead(b, &v)
	return append(b, '}')
}

// AppendVersionDetail appends a version as the version list and the read
// of one version answer it: AppendVersion's fields and change_summary.
func AppendVersionDetail(b []byte, v prompts.PromptVersion) []byte {
	b = appendVersionHead(b, &v)
	b = append(b, `,"change_summary":`...)
	b = appendNullString(b, v.ChangeSummary)
	b = append(b, `,"variables":[`...)
	for i, n := range v.Variables {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, n)
	}
	return append(b, "]}"...)
}

func appendVersionHead(b []byte, v *prompts.PromptVersion) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, v.ID)
	b = append(b, `,"prompt_id":`...)
	b = AppendString(b, v.PromptID)
	b = append(b, `,"version_number":`...)
	b = strconv.AppendInt(b, int64(v.VersionNumber), 10)
	b = append(b, `,"content":`...)
	b = AppendString(b, v.Content)
	b = append(b, `,"metadata_":`...)
	b = appendMetadata(b, v.Metadata)
	b = append(b, `,"created_at":`...)
	return AppendTime(b, v.CreatedAt)
}

// appendMetadata appends metadata as stored (compact JSON text), or null.
func appendMetadata(b []byte, m prompts.Metadata) []byte {
	if m.IsNull() {
		return append(b, "null"...)
	}
	return append(b, m...)
}

// AppendProject appends a project as the list of projects answers it: id,
// name, slug, description, is_private, created_at.
func AppendProject(b []byte, p prompts.Project) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, p.ID)
	b = append(b, `,"name":`...)
	b = AppendString(b, p.Name)
	b = append(b, `,"slug":`...)
	b = AppendString(b, p.Slug)
	b = append(b, `,"description":`...)
	b = AppendString(b, p.Description)
	b = append(b, `,"is_private":`...)
	b = strconv.AppendBool(b, p.IsPrivate)
	b = append(b, `,"created_at":`...)
	b = AppendTime(b, p.CreatedAt)
	return append(b, '}')
}

// AppendDeployment appends a deployment record as the history lists it:
// id, prompt_id, environment, action, version_id, version_number,
// previous_version_id, previous_version_number, actor, reason, created_at.
func AppendDeployment(b []byte, d prompts.Deployment) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, d.ID)
	b = append(b, `,"prompt_id":`...)
	b = AppendString(b, d.PromptID)
	b = append(b, `,"environment":`...)
	b = AppendString(b, string(d.Environment))
	b = append(b, `,"action":`...)
	b = AppendString(b, string(d.Action))
	b = append(b, `,"version_id":`...)
	b = appendNullString(b, d.VersionID)
	b = append(b, `,"version_number":`...)
	b = appendNullInt(b, d.VersionNumber)
	b = append(b, `,"previous_version_id":`...)
	b = appendNullString(b, d.PreviousVersionID)
	b = append(b, `,"previous_version_number":`...)
	b = appendNullInt(b, d.PreviousVersionNumber)
	b = append(b, `,"actor":`...)
	b = appendNullString(b, d.Actor)
	b = append(b, `,"reason":`...)
	b = appendNullString(b, d.Reason)
	b = append(b, `,"created_at":`...)
	b = AppendTime(b, d.CreatedAt)
	return append(b, '}')
}

// appendNullInt appends n, or null when n is nil.
func appendNullInt(b []byte, n *int) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*n), 10)
}

// ParseETag reads a tag that AppendETag made, quoted, and returns the
// prompt id, environment and revision it names; ok is false for any other
// text, a tag of another Form included.
func ParseETag(tag string) (promptID string, env prompts.Environment, revision int64, ok bool) {
	if len(tag) < 2 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		return "", "", 0, false
	}
	form, rest, _ := strings.Cut(tag[1:len(tag)-1], "-")
	if form != strconv.Itoa(Form) {
		return "", "", 0, false
	}
	promptID, rest, _ = strings.Cut(rest, "-")
	e, rev, _ := strings.Cut(rest, "-")
	revision, err := strconv.ParseInt(rev, 10, 64)
	if err != nil || revision <= 0 || !prompts.ValidID(promptID) || prompts.Environment(e).Validate() != nil {
		return "", "", 0, false
	}
	return promptID, prompts.Environment(e), revision, true
}

// Form is the form of the interface's bodies, the first part of every
// entity tag. A release that changes the body of a read whose data did not
// change (a field added to a version, say) moves it on, so that a client
// does not keep a body of the old form on a 304.
const Form = 1

// AppendETag appends the strong entity tag of a's representation, quoted:
// the Form, the prompt's id, the environment and the prompt's revision, as
// in "1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456". The
// representation of a prompt in an environment is a function of those:
// the revision grows with every change to the prompt, its versions and
// what its environments point at. So the tag changes exactly when the
// body may, costs no pass over the body (a 304 is answered before any
// encoding), and names the prompt and the environment, so that a tag of
// one never matches another.
func AppendETag(b []byte, a prompts.ActivePrompt) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, Form, 10)
	b = append(b, '-')
	b = append(b, a.ID...)
	b = append(b, '-')
	b = append(b, a.Environment...)
	b = append(b, '-')
	b = strconv.AppendInt(b, a.Revision, 10)
	return append(b, '"')
}
