// Package prompts is the vocabulary of prompt management: projects, prompts,
// their immutable numbered versions, and the environments (production,
// staging) that each point at one version, so that a prompt can be
// changed, promoted and rolled back without a deploy.
//
// The package does no I/O. It defines the types, their validation, their
// JSON encoding (SPEC part A, fixed to the letter), the errors, and the
// Store interface whose contract every backend keeps:
//
//   - memstore: in memory, the embedded default and the one for unit tests.
//   - sqlstore: PostgreSQL, for services with many replicas.
//   - storetest: the conformance suite every Store passes.
//   - httpapi: the /v1/integration HTTP interface over any Store.
//
// An application reads a prompt the way it refers to it, by project and key,
// in the environment it runs in:
//
//	p, err := store.GetActiveByKey(ctx, projectID, "support/greeting", prompts.Production)
//	if err != nil { ... }
//	if p.ActiveVersion != nil {
//		use(p.ActiveVersion.Content)
//	}
//
// Every input type has a Validate method that reports all invalid fields at
// once; every Store calls it first, so a refused input changes nothing.
package prompts

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of the field rules, in Unicode code points.
const (
	MaxKey           = 128
	MaxName          = 256
	maxDescription   = 4096
	MaxChangeSummary = 1024
	MaxDescription   = maxDescription
)

// Prompt is a named, versioned prompt of a project. Its JSON is SPEC part
// A's Prompt as in responses 1, 4 and 5.
type Prompt struct {
	ID              string
	ProjectID       string
	Key             string // unique within the project, case-sensitive
	Name            string
	Description     *string // nil is null
	LatestVersionID string  // "" (null) while the prompt has no versions
	CreatedAt       time.Time
}

// AppendJSON appends the prompt's JSON encoding to b.
func (p Prompt) AppendJSON(b []byte) []byte {
	b = p.appendHead(b)
	b = append(b, `,"created_at":`...)
	b = AppendTime(b, p.CreatedAt)
	return append(b, '}')
}

// appendHead appends every field but created_at, leaving the object open.
func (p Prompt) appendHead(b []byte) []byte {
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

// MarshalJSON implements json.Marshaler.
func (p Prompt) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil), nil }

// ActivePrompt is a prompt with the version active in one environment: what
// an application reads. Its JSON is SPEC read 3: the prompt's fields without
// created_at, plus active_version (null when nothing is active).
type ActivePrompt struct {
	Prompt
	Environment   Environment
	ActiveVersion *PromptVersion
}

// AppendJSON appends the JSON encoding of read 3 to b.
func (a ActivePrompt) AppendJSON(b []byte) []byte {
	b = a.Prompt.appendHead(b)
	b = append(b, `,"active_version":`...)
	if a.ActiveVersion == nil {
		b = append(b, "null"...)
	} else {
		b = a.ActiveVersion.AppendJSON(b)
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler.
func (a ActivePrompt) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// NewPrompt is the input to Store.CreatePrompt.
type NewPrompt struct {
	ProjectID   string  // required; an unknown project is not found
	Key         string  // required: 1–128 of ASCII letters, digits, . _ - /, starting with a letter or digit
	Name        string  // required: 1–256 characters, not only white space
	Description *string // optional: up to 4,096 characters
}

// Validate reports every field that breaks a rule, at once.
func (in NewPrompt) Validate() error {
	var fe fieldErrors
	checkRef(&fe, "project_id", in.ProjectID, true)
	checkKey(&fe, "key", in.Key)
	checkName(&fe, "name", in.Name)
	if in.Description != nil {
		checkText(&fe, "description", *in.Description, maxDescription)
	}
	return fe.err()
}

// Optional is one field of an update, in one of three states: absent (the
// zero value: leave it unchanged), null (Null), or a value (Some). Its
// UnmarshalJSON tells the three apart when it is a struct field.
type Optional[T any] struct {
	Set   bool // the field was given, as null or as a value
	Null  bool // it was given as null
	Value T
}

// Some returns an Optional holding v.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: v} }

// Null returns an Optional given as null.
func Null[T any]() Optional[T] { return Optional[T]{Set: true, Null: true} }

// UnmarshalJSON implements json.Unmarshaler: null or a value of T.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	*o = Optional[T]{Set: true}
	if bytes.Equal(b, []byte("null")) {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// PromptUpdate is the input to Store.UpdatePrompt. A field left absent
// stays unchanged; the zero PromptUpdate is a valid no-op.
type PromptUpdate struct {
	Key         Optional[string] // null is invalid
	Name        Optional[string] // null is invalid
	Description Optional[string] // null clears it
}

// Validate reports every field that breaks a rule, at once.
func (in PromptUpdate) Validate() error {
	var fe fieldErrors
	if in.Key.Null {
		fe.add("key", "cannot be null")
	} else if in.Key.Set {
		checkKey(&fe, "key", in.Key.Value)
	}
	if in.Name.Null {
		fe.add("name", "cannot be null")
	} else if in.Name.Set {
		checkName(&fe, "name", in.Name.Value)
	}
	if in.Description.Set && !in.Description.Null {
		checkText(&fe, "description", in.Description.Value, maxDescription)
	}
	return fe.err()
}

// Apply returns p with the update applied. It assumes in is valid.
func (in PromptUpdate) Apply(p Prompt) Prompt {
	if in.Key.Set {
		p.Key = in.Key.Value
	}
	if in.Name.Set {
		p.Name = in.Name.Value
	}
	if in.Description.Set {
		if in.Description.Null {
			p.Description = nil
		} else {
			d := in.Description.Value
			p.Description = &d
		}
	}
	return p
}

// PromptFilter selects the prompts Store.ListPrompts returns.
type PromptFilter struct {
	// ProjectIDs, when not nil, limits the list to prompts of these
	// projects (an empty, non-nil slice lists nothing). The HTTP layer
	// puts here the one project asked for, or the projects a key may see.
	ProjectIDs []string
	// Key, when not empty, limits the list to prompts with this key (at
	// most one per project). It must be a well-formed key.
	Key string
	Page
}

// Validate reports every field that breaks a rule, at once.
func (f PromptFilter) Validate() error {
	var fe fieldErrors
	if f.Key != "" {
		checkKey(&fe, "key", f.Key)
	}
	f.Page.check(&fe)
	return fe.err()
}

// Page selects one page of a list. Lists are ordered by id (oldest first,
// but versions newest first); After is the id of the last item already
// seen: a position, so it need not name an existing item.
type Page struct {
	Limit int    // 1–1000; 0 means DefaultLimit
	After string // "" for the first page; else a well-formed id
}

// Paging bounds.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Size returns the number of items the page holds at most.
func (p Page) Size() int {
	if p.Limit == 0 {
		return DefaultLimit
	}
	return p.Limit
}

// Validate checks the limit and the position.
func (p Page) Validate() error {
	var fe fieldErrors
	p.check(&fe)
	return fe.err()
}

func (p Page) check(fe *fieldErrors) {
	if p.Limit < 0 || p.Limit > MaxLimit {
		fe.add("limit", "must be between 1 and 1000")
	}
	if p.After != "" && !ValidID(p.After) {
		fe.add("after", "must be a well-formed id (a ULID)")
	}
}

// Field rules shared by the inputs.

func checkKey(fe *fieldErrors, field, k string) {
	switch {
	case k == "":
		fe.add(field, "is required")
	case len(k) > MaxKey:
		fe.add(field, "must be at most 128 characters")
	case !ValidKey(k):
		fe.add(field, "must hold only ASCII letters, digits, '.', '_', '-' and '/', and start with a letter or digit")
	}
}

// ValidKey reports whether k is a well-formed prompt key.
func ValidKey(k string) bool {
	if len(k) == 0 || len(k) > MaxKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-' || c == '/'):
		default:
			return false
		}
	}
	return true
}

func validName(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return true
		}
	}
	return false
}

func checkName(fe *fieldErrors, field, s string) {
	if s == "" {
		fe.add(field, "is required")
		return
	}
	if !checkText(fe, field, s, MaxName) {
		return
	}
	if !validName(s) {
		fe.add(field, "must not be only white space")
	}
}

// checkRef checks a string that refers to something by id. Any string is
// a valid reference (an unknown or malformed id is simply not found), but
// like every string it must be valid UTF-8 without NUL characters.
func checkRef(fe *fieldErrors, field, id string, required bool) {
	switch {
	case id == "":
		if required {
			fe.add(field, "is required")
		}
	case !utf8.ValidString(id):
		fe.add(field, "must be valid UTF-8")
	case containsNUL(id):
		fe.add(field, "must not contain the NUL character (\\u0000)")
	}
}

// checkText checks a free text: valid UTF-8, no NUL, at most max code
// points. It reports whether the text passed.
func checkText(fe *fieldErrors, field, s string, max int) bool {
	switch {
	case !utf8.ValidString(s):
		fe.add(field, "must be valid UTF-8")
	case containsNUL(s):
		fe.add(field, "must not contain the NUL character (\\u0000)")
	case utf8.RuneCountInString(s) > max:
		fe.add(field, "must be at most "+strconv.Itoa(max)+" characters")
	default:
		return true
	}
	return false
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}

// Copy returns p with its own copy of Description, so that changing one
// does not change the other.
func (p Prompt) Copy() Prompt {
	if p.Description != nil {
		d := *p.Description
		p.Description = &d
	}
	return p
}
