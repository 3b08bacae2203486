package prompts

import (
	"errors"
	"strings"
)

// Code classifies an error. Callers branch on codes, never on message text.
type Code string

// The error codes. Every error a Store returns carries one of them; an error
// that carries none is CodeInternal.
const (
	CodeInvalid  Code = "invalid"   // the input broke a field rule
	CodeNotFound Code = "not_found" // the thing asked for does not exist
	CodeConflict Code = "conflict"  // the write clashes with existing state (a key taken)
	// CodeUnavailable: the backing service cannot be reached; retry later.
	// On a write it does not prove that nothing was written: the commit
	// may have succeeded as the connection died. Repeat the write with the
	// same Idempotency to have it done exactly once.
	CodeUnavailable Code = "unavailable"
	CodeInternal    Code = "internal" // anything else: a bug or an unexpected failure
	// CodePreconditionFailed: the prompt is not at the revision the change
	// expected (Change.IfRevision).
	CodePreconditionFailed Code = "precondition_failed"
	// CodeVariablesChanged: the promotion guard refused an activation
	// whose version uses other variables than the active one.
	CodeVariablesChanged Code = "variables_changed"
	// CodePartialUnavailable: a partial ({{> KEY}}) a render or an
	// activation needs is missing, has no version active in the
	// environment, includes itself (a cycle) or nests too deeply; the
	// message names it, or the chain.
	CodePartialUnavailable Code = "partial_unavailable"
	// CodePartialInUse: a deactivation refused because a version active
	// in that environment includes the prompt as a partial; the message
	// names the prompts that include it.
	CodePartialInUse Code = "partial_in_use"
	// CodeIdempotencyKeyReused: an idempotency key that named one write
	// was given with another (see Idempotency).
	CodeIdempotencyKeyReused Code = "idempotency_key_reused"
	// CodeEventsExpired: a reader of the event log asked for what follows
	// an event older than the oldest kept; events it has not seen are gone,
	// and it must read everything again.
	CodeEventsExpired Code = "events_expired"
	// CodeUnauthenticated: a remote Store (package client) was refused
	// for want of a valid API key. No local Store returns it.
	CodeUnauthenticated Code = "unauthenticated"
	// CodeForbidden: a remote Store's API key may not do what was asked
	// (its role is below the one the call needs). No local Store returns
	// it.
	CodeForbidden Code = "forbidden"
)

// Sentinel errors, one per code, for errors.Is:
//
//	if errors.Is(err, prompts.ErrNotFound) { ... }
var (
	ErrInvalid     = &Error{Code: CodeInvalid, Message: "invalid input"}
	ErrNotFound    = &Error{Code: CodeNotFound, Message: "not found"}
	ErrConflict    = &Error{Code: CodeConflict, Message: "conflict"}
	ErrUnavailable = &Error{Code: CodeUnavailable, Message: "service unavailable"}

	ErrPreconditionFailed   = &Error{Code: CodePreconditionFailed, Message: "precondition failed"}
	ErrVariablesChanged     = &Error{Code: CodeVariablesChanged, Message: "variables changed"}
	ErrPartialUnavailable   = &Error{Code: CodePartialUnavailable, Message: "partial unavailable"}
	ErrPartialInUse         = &Error{Code: CodePartialInUse, Message: "partial in use"}
	ErrIdempotencyKeyReused = &Error{Code: CodeIdempotencyKeyReused, Message: "idempotency key reused"}
	ErrEventsExpired        = &Error{Code: CodeEventsExpired, Message: "the events after this id are no longer kept; read everything again"}
	ErrUnauthenticated      = &Error{Code: CodeUnauthenticated, Message: "a valid API key is required"}
	ErrForbidden            = &Error{Code: CodeForbidden, Message: "the API key's role does not allow this"}
)

// FieldError names one invalid field of an input and what is wrong with it.
type FieldError struct {
	Field  string // the field's JSON name, e.g. "key" or "metadata_"
	Detail string // what is wrong, for people
}

// Error is the error type of this package and of every Store. Use errors.As
// to read its fields, errors.Is with the sentinels to test its code.
type Error struct {
	Code    Code
	Message string       // for people; never holds driver or SQL text
	Fields  []FieldError // with CodeInvalid: every invalid field, in input order
	Err     error        // the underlying cause, if any; for logs, not for users
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	for i, f := range e.Fields {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(f.Field)
		b.WriteString(": ")
		b.WriteString(f.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, ErrNotFound) holds for every not-found error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// ErrorCode returns the code of err: the code of the first *Error in its
// chain, "" for nil, and CodeInternal for anything else.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// fieldErrors collects the invalid fields of one input.
type fieldErrors []FieldError

func (fe *fieldErrors) add(field, detail string) {
	*fe = append(*fe, FieldError{Field: field, Detail: detail})
}

// err returns nil when nothing was collected; an untyped nil, so that
// callers can compare with nil.
func (fe fieldErrors) err() error {
	if len(fe) == 0 {
		return nil
	}
	return &Error{Code: CodeInvalid, Message: "invalid input", Fields: fe}
}
