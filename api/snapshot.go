package api

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/promptkit/prompts"
)

// SnapshotFormat names the form of a Snapshot document, its format
// member.
const SnapshotFormat = "prompts.snapshot/1"

// Snapshot is every prompt of a project with the version active in each
// environment, as GET /projects/{project_id}/snapshot sends it and
// package cache writes and reads it: the project as the list of projects
// has it, each prompt as the list of prompts, each version as the read of
// one version.
type Snapshot struct {
	Format  string    `json:"format"` // SnapshotFormat
	TakenAt time.Time `json:"taken_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
	Project Project   `json:"project"`
	// Environments names the project's environments, built-in ones
	// first; absent from snapshots of releases before projects had
	// environments of their own, which hold production and staging.
	Environments []prompts.Environment `json:"environments,omitzero"`
	Prompts      []SnapshotPrompt      `json:"prompts"` // oldest first; never null
}

// SnapshotPrompt is one prompt of a Snapshot: its revision, and in each
// environment the version active there (null when none is), every
// environment of the snapshot named. An environment that holds a split
// has its first entry's version in environments, and the split with every
// entry's version in splits (absent when no environment holds one; a
// reader of the snapshots before splits serves the first entry).
type SnapshotPrompt struct {
	Prompt       Prompt                                  `json:"prompt"`
	Revision     int64                                   `json:"revision"`
	Environments map[prompts.Environment]*VersionDetail  `json:"environments"`
	Splits       map[prompts.Environment][]SnapshotShare `json:"splits,omitzero"`
}

// SnapshotShare is one entry of a split in a snapshot: its weight and its
// version, whole.
type SnapshotShare struct {
	Weight  int           `json:"weight"`
	Version VersionDetail `json:"version"`
}

// PathError is a document refused for one of its members: Path names it
// as in prompts[3].environments.staging.content (empty for the whole
// document), Problem says what is wrong.
type PathError struct {
	Path    string
	Problem string
}

func (e *PathError) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// UnmarshalComplete decodes data into v as UnmarshalLenient does (members
// v's types do not have are ignored), but every member of those types
// must be present, and may be null only where the type allows it (a
// pointer, Metadata, an Optional). Its errors are *PathError: the first
// problem, and where it is.
func UnmarshalComplete(data []byte, v any) error {
	t := reflect.TypeOf(v).Elem()
	if err := json.Unmarshal(data, v); err != nil {
		return unmarshalError(data, t, err)
	}
	return present(jsontext.Value(data), t, "")
}

// unmarshalError names the member that err, an error of Unmarshal of data
// into a value of type t, is about, and what it must be.
func unmarshalError(data []byte, t reflect.Type, err error) error {
	var se *jsontext.SyntacticError
	var me *json.SemanticError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || len(bytes.TrimSpace(data)) == 0:
		return &PathError{Problem: "not valid JSON: it ends too soon"}
	case errors.As(err, &se):
		return &PathError{Problem: "not valid JSON at byte " + strconv.FormatInt(se.ByteOffset, 10) + ": " + se.Err.Error()}
	case errors.As(err, &me):
		path := pathOf(data, me.JSONPointer)
		mt, nullable := typeAt(t, me.JSONPointer)
		if mt == nil {
			return &PathError{Path: path, Problem: me.Error()}
		}
		problem := "must be " + kindWant(mt, nullable)
		if me.JSONKind != 0 && mt != reflect.TypeFor[time.Time]() {
			problem += ", not a JSON " + kindName(me.JSONKind)
		}
		return &PathError{Path: path, Problem: problem}
	}
	return &PathError{Problem: err.Error()}
}

// typeAt returns the Go type the member at ptr decodes into, below t, and
// whether it may be null.
func typeAt(t reflect.Type, ptr jsontext.Pointer) (reflect.Type, bool) {
	nullable := false
	deref := func() {
		for t.Kind() == reflect.Pointer {
			t, nullable = t.Elem(), true
		}
	}
	deref()
	for tok := range ptr.Tokens() {
		nullable = false
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByName(t, tok)
			if !ok {
				return nil, false
			}
			t = f.Type
		case reflect.Slice, reflect.Map:
			t = t.Elem()
		default:
			return nil, false
		}
		deref()
	}
	return t, nullable
}

// fieldByName returns the field of t, a struct type, whose JSON name is
// name, looking into embedded structs.
func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if g, ok := fieldByName(f.Type, name); ok {
				return g, true
			}
			continue
		}
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// kindWant says what a member of type t must be.
func kindWant(t reflect.Type, nullable bool) string {
	var w string
	switch {
	case t == reflect.TypeFor[time.Time]():
		return "an RFC 3339 time, as 2026-11-21T22:19:26.123456Z"
	case t == reflect.TypeFor[Metadata]():
		return "a JSON object or null"
	case t.Kind() == reflect.String:
		w = "a string"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		w = "an integer"
	case t.Kind() == reflect.Slice:
		w = "an array"
	default:
		return "an object"
	}
	if nullable {
		w += " or null"
	}
	return w
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

// present checks that val, a valid JSON value that decoded into a value
// of type t, holds every member of t's structs, at any depth.
func present(val jsontext.Value, t reflect.Type, at string) error {
	null := val.Kind() == 'n'
	if t.Kind() == reflect.Pointer || t == reflect.TypeFor[Metadata]() || strings.HasPrefix(t.Name(), "Optional[") {
		if null {
			return nil
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	if null {
		return &PathError{Path: at, Problem: "missing"}
	}
	switch t.Kind() {
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			return nil
		}
		members, err := objectMembers(val)
		if err != nil {
			return err
		}
		return presentFields(members, t, at)
	case reflect.Slice:
		if t == reflect.TypeFor[Metadata]() {
			return nil
		}
		dec := jsontext.NewDecoder(bytes.NewReader(val))
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		for i := 0; dec.PeekKind() != ']'; i++ {
			elem, err := dec.ReadValue()
			if err != nil {
				return err
			}
			if err := present(elem, t.Elem(), at+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		members, err := objectMembers(val)
		if err != nil {
			return err
		}
		for _, m := range members {
			if err := present(m.value, t.Elem(), join(at, m.name)); err != nil {
				return err
			}
		}
	}
	return nil
}

func presentFields(members []member, t reflect.Type, at string) error {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := presentFields(members, f.Type, at); err != nil {
				return err
			}
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || strings.Contains(opts, "omit") {
			continue
		}
		found := false
		for _, m := range members {
			if m.name == name {
				found = true
				if err := present(m.value, f.Type, join(at, name)); err != nil {
					return err
				}
				break
			}
		}
		if !found {
			return &PathError{Path: join(at, name), Problem: "missing"}
		}
	}
	return nil
}

type member struct {
	name  string
	value jsontext.Value
}

// objectMembers returns the members of val, a JSON object, in order.
func objectMembers(val jsontext.Value) ([]member, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(val))
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	var out []member
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		out = append(out, member{name, v.Clone()}) // the next read may reuse v
	}
	return out, nil
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}
