package prompts

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// PromptVersion is one immutable, numbered content version of a prompt. Its
// JSON is SPEC part A's PromptVersion (response 2): id, prompt_id,
// version_number, content, metadata_, created_at; AppendDetailJSON adds
// change_summary, as the version list and read carry it.
type PromptVersion struct {
	ID            string
	PromptID      string
	VersionNumber int // 1, 2, … per prompt, no gaps
	Content       string
	ChangeSummary *string // nil is null
	Metadata      Metadata
	CreatedAt     time.Time
}

// AppendJSON appends the version's JSON encoding (without change_summary).
func (v PromptVersion) AppendJSON(b []byte) []byte {
	b = v.appendHead(b)
	return append(b, '}')
}

// AppendDetailJSON appends the version's JSON encoding with change_summary.
func (v PromptVersion) AppendDetailJSON(b []byte) []byte {
	b = v.appendHead(b)
	b = append(b, `,"change_summary":`...)
	b = appendNullString(b, v.ChangeSummary)
	return append(b, '}')
}

func (v PromptVersion) appendHead(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, v.ID)
	b = append(b, `,"prompt_id":`...)
	b = AppendString(b, v.PromptID)
	b = append(b, `,"version_number":`...)
	b = strconv.AppendInt(b, int64(v.VersionNumber), 10)
	b = append(b, `,"content":`...)
	b = AppendString(b, v.Content)
	b = append(b, `,"metadata_":`...)
	b = v.Metadata.appendJSON(b)
	b = append(b, `,"created_at":`...)
	return AppendTime(b, v.CreatedAt)
}

// MarshalJSON implements json.Marshaler.
func (v PromptVersion) MarshalJSON() ([]byte, error) { return v.AppendJSON(nil), nil }

// Metadata is a version's free-form metadata_: the text of a JSON object,
// or "" for null. It is a string so that it cannot be changed once stored
// and costs nothing to hand out; its numbers keep every digit because it is
// never decoded into float64.
//
//	prompts.Metadata(`{"model":"gpt-5","temperature":0.2}`)
type Metadata string

// Metadata limits.
const (
	MaxMetadataDepth = 32
	MaxMetadataSize  = 64 << 10
)

// IsNull reports whether m is null.
func (m Metadata) IsNull() bool {
	return strings.TrimSpace(string(m)) == "" || strings.TrimSpace(string(m)) == "null"
}

// Normalize returns m compacted (white space removed), or "" when it is
// null. Stores keep metadata in this form. It assumes m is valid.
func (m Metadata) Normalize() Metadata {
	if m.IsNull() {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(m)); err != nil {
		return m
	}
	return Metadata(buf.String())
}

// MarshalJSON implements json.Marshaler.
func (m Metadata) MarshalJSON() ([]byte, error) { return m.appendJSON(nil), nil }

func (m Metadata) appendJSON(b []byte) []byte {
	if m.IsNull() {
		return append(b, "null"...)
	}
	return append(b, m...)
}

// UnmarshalJSON implements json.Unmarshaler: it keeps the raw text, which
// Validate then checks.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*m = ""
		return nil
	}
	*m = Metadata(b)
	return nil
}

// Validate checks that m is null or a JSON object in valid UTF-8 that nests
// at most 32 levels, encodes (compacted) to at most 64 KiB, and holds no
// NUL character in any string or name.
func (m Metadata) Validate() error {
	var fe fieldErrors
	m.check(&fe)
	return fe.err()
}

func (m Metadata) check(fe *fieldErrors) {
	const field = "metadata_"
	if m.IsNull() {
		return
	}
	if !utf8.ValidString(string(m)) {
		// encoding/json accepts invalid UTF-8 in strings; PostgreSQL does not.
		fe.add(field, "must be valid UTF-8")
		return
	}
	if !json.Valid([]byte(m)) {
		fe.add(field, "must be valid JSON")
		return
	}
	compact := m.Normalize()
	if compact[0] != '{' {
		fe.add(field, "must be a JSON object or null")
		return
	}
	if len(compact) > MaxMetadataSize {
		fe.add(field, "must encode to at most 64 KiB")
		return
	}
	dec := json.NewDecoder(strings.NewReader(string(compact)))
	dec.UseNumber()
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			fe.add(field, "must be valid JSON")
			return
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				depth++
				if depth > MaxMetadataDepth {
					fe.add(field, "must nest at most 32 levels")
					return
				}
			} else {
				depth--
			}
		case string:
			if containsNUL(t) {
				fe.add(field, "must not contain the NUL character (\\u0000)")
				return
			}
		}
	}
}

// Environment is where a version can be active.
type Environment string

// The environments.
const (
	Production Environment = "production"
	Staging    Environment = "staging"
)

// Environments lists every environment.
var Environments = []Environment{Production, Staging}

// Valid reports whether e is one of the environments.
func (e Environment) Valid() bool { return e == Production || e == Staging }

// ParseEnvironment returns the environment named s; "" means Production.
func ParseEnvironment(s string) (Environment, error) {
	if s == "" {
		return Production, nil
	}
	e := Environment(s)
	if !e.Valid() {
		return "", Invalid("environment", "must be production or staging")
	}
	return e, nil
}

// NewVersion is the input to Store.CreateVersion.
type NewVersion struct {
	PromptID      string        // required; an unknown prompt is not found
	Content       string        // required, not empty
	ChangeSummary *string       // optional: up to 1,024 characters
	Metadata      Metadata      // optional: a JSON object, or "" for null
	Environments  []Environment // optional: activate the new version there in the same atomic step
}

// Validate reports every field that breaks a rule, at once.
func (in NewVersion) Validate() error {
	var fe fieldErrors
	if in.PromptID == "" {
		fe.add("prompt_id", "is required")
	}
	if in.Content == "" {
		fe.add("content", "is required and must not be empty")
	} else {
		checkText(&fe, "content", in.Content, len(in.Content))
	}
	if in.ChangeSummary != nil {
		checkText(&fe, "change_summary", *in.ChangeSummary, MaxChangeSummary)
	}
	in.Metadata.check(&fe)
	for _, e := range in.Environments {
		if !e.Valid() {
			fe.add("environments", "must hold only production and staging")
			break
		}
	}
	return fe.err()
}

// Activation is the input to Store.Activate: make one version of a prompt
// the active one in an environment. It names the version by id or by
// number, exactly one of the two.
type Activation struct {
	PromptID      string
	Environment   Environment
	VersionID     string // the version's id, or
	VersionNumber int    // its number (0 means not given)
}

// Validate reports every field that breaks a rule, at once.
func (in Activation) Validate() error {
	var fe fieldErrors
	if in.PromptID == "" {
		fe.add("prompt_id", "is required")
	}
	if !in.Environment.Valid() {
		fe.add("environment", "must be production or staging")
	}
	switch {
	case in.VersionID != "" && in.VersionNumber != 0:
		fe.add("version_id", "give version_id or version_number, not both")
	case in.VersionID == "" && in.VersionNumber == 0:
		fe.add("version_id", "give version_id or version_number")
	case in.VersionNumber < 0:
		fe.add("version_number", "must be 1 or more")
	default:
		checkRef(&fe, "version_id", in.VersionID, false)
	}
	return fe.err()
}

// Copy returns v with its own copy of ChangeSummary.
func (v PromptVersion) Copy() PromptVersion {
	if v.ChangeSummary != nil {
		c := *v.ChangeSummary
		v.ChangeSummary = &c
	}
	return v
}
