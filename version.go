package prompts

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// PromptVersion is one immutable, numbered content version of a prompt.
type PromptVersion struct {
	ID            string
	PromptID      string
	VersionNumber int // 1, 2, … per prompt, no gaps
	Content       string
	ChangeSummary *string // nil is null
	Metadata      Metadata
	CreatedAt     time.Time
	// TemplateFormat is the language of Content: FormatPlain or
	// FormatDotprompt. Versions stored before formats existed are plain.
	TemplateFormat TemplateFormat
	// Variables are the names of the variables of Content (see
	// TemplateVariables), computed once when the version is stored.
	Variables []string
	// Partials are the keys of the prompts Content includes as partials
	// ({{> KEY}}), sorted, each once, never nil (see TemplatePartials),
	// computed once when the version is stored.
	Partials []string

	// Replayed: see Prompt.Replayed.
	Replayed bool
}

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

// Validate checks that m is null or a JSON object in valid UTF-8 that nests
// at most 32 levels, encodes (compacted) to at most 64 KiB, holds no NUL
// character in any string or name, and gives no name twice in one object
// (at any depth: the error's field is the member's path, as in
// metadata_.a.b[1].c, and its detail "is given more than once").
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
	// levels are the objects and arrays the decoder is in, to find a
	// name given twice in one object and say where it is.
	var levels []level
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			fe.add(field, "must be valid JSON")
			return
		}
		var top *level
		if len(levels) > 0 {
			top = &levels[len(levels)-1]
		}
		if t, ok := tok.(string); ok && top != nil && top.object && top.wantName {
			// A member's name.
			if containsNUL(t) {
				fe.add(field, ruleNoNUL)
				return
			}
			if _, dup := top.names[t]; dup {
				// The HTTP interface names it so too.
				fe.add(memberPath(field, levels[:len(levels)-1])+"."+t, "is given more than once")
				return
			}
			if top.names == nil {
				top.names = map[string]struct{}{}
			}
			top.names[t] = struct{}{}
			top.name, top.wantName = t, false
			continue
		}
		if top != nil && !top.object && tok != json.Delim(']') {
			top.index++ // a value of an array
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(levels) >= MaxMetadataDepth {
					fe.add(field, "must nest at most 32 levels")
					return
				}
				levels = append(levels, level{object: t == '{', wantName: true, index: -1})
				continue
			default:
				levels = levels[:len(levels)-1]
			}
		case string:
			if containsNUL(t) {
				fe.add(field, ruleNoNUL)
				return
			}
		}
		// A value ended: in an object, a name comes next.
		if len(levels) > 0 {
			levels[len(levels)-1].wantName = true
		}
	}
}

// level is an object or array metadata's check is in.
type level struct {
	object   bool
	wantName bool                // object: the next string is a name
	name     string              // object: the name of the member being read
	names    map[string]struct{} // object: the names read
	index    int                 // array: the index of the value being read
}

// memberPath returns the path to the value levels are in, from root:
// metadata_.a.b[2].c, as the HTTP interface names a member.
func memberPath(root string, levels []level) string {
	var b strings.Builder
	b.WriteString(root)
	for _, l := range levels {
		if l.object {
			b.WriteString("." + l.name)
		} else {
			b.WriteString("[" + strconv.Itoa(l.index) + "]")
		}
	}
	return b.String()
}

// NewVersion is the input to Store.CreateVersion.
type NewVersion struct {
	PromptID      string   // required; an unknown prompt is not found
	Content       string   // required, not empty
	ChangeSummary *string  // optional: up to 1,024 characters
	Metadata      Metadata // optional: a JSON object, or "" for null
	// TemplateFormat is the language of Content; "" takes the format of
	// the prompt's latest version, FormatPlain for its first. A dotprompt
	// template that does not parse is invalid input for "content".
	TemplateFormat TemplateFormat
	Environments   []Environment // optional: activate the new version there in the same atomic step
	// Actor names who creates the version, for the Deployment records of
	// its Environments; "" records none.
	Actor string
	// Reason says why, for the Deployment records of its Environments, in
	// up to MaxReason code points; "" records none. Without Environments
	// there is no record, and it is kept nowhere.
	Reason string
	// AllowVariableChange turns the promotion guard off for its
	// Environments (see Change.AllowVariableChange).
	AllowVariableChange bool
	// AllowProtected lets its Environments include protected ones (see
	// Change.AllowProtected).
	AllowProtected bool
	// AllowMissingPartials turns the partials guard off for its
	// Environments (see Change.AllowMissingPartials).
	AllowMissingPartials bool
	// Idempotency, optional, makes a repeat of this create do nothing new.
	Idempotency Idempotency
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
	if in.TemplateFormat != "" {
		in.TemplateFormat.check(&fe, "template_format")
	}
	for _, e := range in.Environments {
		if !e.check(&fe, "environments") {
			break // one error for the field
		}
	}
	checkText(&fe, "actor", in.Actor, MaxName)
	checkText(&fe, "reason", in.Reason, MaxReason)
	in.Idempotency.check(&fe)
	return fe.err()
}

// Copy returns v with its own copies of ChangeSummary, Variables and
// Partials. It makes one allocation for up to 6 variables and partials,
// more beyond.
func (v PromptVersion) Copy() PromptVersion {
	if v.ChangeSummary == nil && len(v.Variables) == 0 && len(v.Partials) == 0 {
		v.Variables, v.Partials = clip(v.Variables), clip(v.Partials)
		return v // nil or empty, as they were
	}
	blk := new(struct {
		summary string
		names   [6]string
	})
	if v.ChangeSummary != nil {
		blk.summary = *v.ChangeSummary
		v.ChangeSummary = &blk.summary
	}
	names := blk.names[:0]
	if v.Variables != nil {
		v.Variables, names = copyNames(v.Variables, names)
	}
	if v.Partials != nil {
		v.Partials, _ = copyNames(v.Partials, names)
	}
	return v
}

// clip returns list, nil or empty, without room to append in place.
func clip(list []string) []string {
	if list == nil {
		return nil
	}
	return list[:0:0]
}

// copyNames returns a copy of list, in room's spare capacity when it fits
// (a slice whose capacity is its length, so that appending to it copies
// it), and what remains of room.
func copyNames(list, room []string) (copied, rest []string) {
	if len(list) > cap(room)-len(room) {
		return slices.Clone(list), room
	}
	n := len(room)
	room = append(room, list...)
	return room[n:len(room):len(room)], room
}
