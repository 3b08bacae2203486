package api

import (
	"bytes"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/promptkit/prompts"
)

// TimeLayout is the one timestamp format of the interface: RFC 3339 in
// UTC with exactly six fractional digits and a Z. The time fields of this
// package carry it as their format option; the conversions from package
// prompts put times in UTC.
const TimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// marshalOptions: strings with invalid UTF-8 are written with U+FFFD in
// place of the bad bytes, as encoding/json does, rather than refused; the
// strings of raw JSON (metadata_) are written as they are, escapes
// included; the members of a map in the order of their names.
var marshalOptions = json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.PreserveRawStrings(true), json.Deterministic(true))

// Marshal returns the JSON of v, compact, as the interface sends it:
// times in TimeLayout, <, > and & as they are, metadata_ as it is.
func Marshal(v any) ([]byte, error) {
	return json.Marshal(v, marshalOptions)
}

// Append appends the JSON of v to b, as Marshal writes it.
func Append(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	if err := json.MarshalWrite(buf, v, marshalOptions); err != nil {
		return b, err
	}
	return buf.Bytes(), nil
}

// Unmarshal decodes data, one JSON value, into v with the interface's
// rules: a name given twice in any object, invalid UTF-8, a lone UTF-16
// surrogate and a member that v's type does not have are errors. (A
// request body is read with DecodeRequest, which says what is wrong in
// the interface's words.)
func Unmarshal(data []byte, v any) error {
	return json.Unmarshal(data, v, json.RejectUnknownMembers(true))
}

// UnmarshalLenient is Unmarshal, but ignores members v's type does not
// have: for answers and events, which a later server may send with more
// fields.
func UnmarshalLenient(data []byte, v any) error {
	return json.Unmarshal(data, v)
}

// Optional is one optional member of a request, in one of three states:
// absent (the zero value), null, or a value. Where a request does not say
// otherwise, null means the same as absent.
type Optional[T any] prompts.Optional[T]

// Some returns an Optional holding v.
func Some[T any](v T) Optional[T] { return Optional[T](prompts.Some(v)) }

// Null returns an Optional given as null.
func Null[T any]() Optional[T] { return Optional[T](prompts.Null[T]()) }

// Domain returns o as package prompts has it.
func (o Optional[T]) Domain() prompts.Optional[T] { return prompts.Optional[T](o) }

// Ptr returns a pointer to o's value, or nil when it holds none.
func (o Optional[T]) Ptr() *T {
	if !o.Set || o.Null {
		return nil
	}
	v := o.Value
	return &v
}

// MarshalJSON writes null when o holds no value, else the value. An
// absent member is left out with the omitzero option (see IsZero).
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if !o.Set || o.Null {
		return []byte("null"), nil
	}
	return Marshal(o.Value)
}

// IsZero reports whether o was not given, for the omitzero option.
func (o Optional[T]) IsZero() bool { return !o.Set }

// UnmarshalJSON reads null or a value of T.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	*o = Optional[T]{Set: true}
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// VersionNumber is a request's version_number: an Optional integer, but
// a positive integer too large for an int reads as the largest int, a
// number no version has (so that it is not found, as in a path, rather
// than refused).
type VersionNumber Optional[int]

// MarshalJSON writes null when n holds no value, else the number.
func (n VersionNumber) MarshalJSON() ([]byte, error) { return Optional[int](n).MarshalJSON() }

// IsZero reports whether n was not given, for the omitzero option.
func (n VersionNumber) IsZero() bool { return !n.Set }

// UnmarshalJSON reads null or an integer.
func (n *VersionNumber) UnmarshalJSON(b []byte) error {
	var o Optional[int]
	err := o.UnmarshalJSON(b)
	if err != nil && isDigits(b) {
		o, err = Some(int(^uint(0)>>1)), nil
	}
	*n = VersionNumber(o)
	return err
}

// isDigits reports whether b is a JSON integer without a sign.
func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// Metadata is a version's metadata_: the text of a JSON object, kept as
// it is (numbers keep every digit), or empty for null.
type Metadata []byte

// MarshalJSON writes the object, or null.
func (m Metadata) MarshalJSON() ([]byte, error) {
	if prompts.Metadata(m).IsNull() {
		return []byte("null"), nil
	}
	return m, nil
}

// UnmarshalJSON keeps the text of the value; null is empty. Whether it is
// an object is for prompts.Metadata's Validate to judge.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*m = nil
		return nil
	}
	*m = append((*m)[:0], b...)
	return nil
}

// utc returns t in UTC, as the interface writes times.
func utc(t time.Time) time.Time { return t.UTC() }

// eventID writes an event's id as the interface does: a decimal string.
func eventID(id int64) string { return strconv.FormatInt(id, 10) }
