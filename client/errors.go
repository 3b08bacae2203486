package client

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// errNotImplemented is the error of a call the server cannot serve: its
// store keeps no event log (501).
var errNotImplemented = fmt.Errorf("client: the server's store keeps no event log: %w", errors.ErrUnsupported)

// problemError returns the *prompts.Error that an answer of status 400 or
// more means: the problem's code mapped to a prompts.Code (by the status
// when the body is no problem, as from a proxy), its detail as the
// message and its errors as the fields.
func problemError(res *response) error {
	var p api.Problem
	if isJSON(res.header.Get("Content-Type")) {
		_ = api.UnmarshalLenient(res.body, &p) // a body that is no problem leaves p empty
	}
	code := codeOf(p.Code, res.status)
	if code == "" {
		// 501: the route needs what the server's store lacks.
		return &prompts.Error{Code: prompts.CodeInternal, Message: "the server cannot serve this: " + detailOr(p.Detail, res.status), Err: errNotImplemented}
	}
	e := &prompts.Error{Code: code, Message: detailOr(p.Detail, res.status), Fields: api.DomainFields(p.Errors)}
	if code == prompts.CodeInternal {
		e.Err = fmt.Errorf("client: the server answered %d %s", res.status, p.Code)
	}
	return e
}

func detailOr(detail string, status int) string {
	if detail != "" {
		return detail
	}
	return strings.ToLower(http.StatusText(status))
}

// codeOf maps a problem's code, or its status when the code is unknown,
// to the code of the domain: "" for 501.
func codeOf(code string, status int) prompts.Code {
	switch code {
	case "invalid_request", "payload_too_large":
		return prompts.CodeInvalid
	case "unauthenticated":
		return prompts.CodeUnauthenticated
	case "forbidden":
		return prompts.CodeForbidden
	case "not_found":
		return prompts.CodeNotFound
	case "conflict":
		return prompts.CodeConflict
	case "variables_changed":
		return prompts.CodeVariablesChanged
	case "partial_unavailable":
		return prompts.CodePartialUnavailable
	case "partial_in_use":
		return prompts.CodePartialInUse
	case "precondition_failed":
		return prompts.CodePreconditionFailed
	case "idempotency_key_reused":
		return prompts.CodeIdempotencyKeyReused
	case "events_expired":
		return prompts.CodeEventsExpired
	case "unavailable", "request_timeout":
		return prompts.CodeUnavailable
	case "not_implemented":
		return ""
	case "internal", "method_not_allowed", "unsupported_media_type":
		return prompts.CodeInternal // the server failed, or this client did
	}
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return prompts.CodeInvalid
	case http.StatusUnauthorized:
		return prompts.CodeUnauthenticated
	case http.StatusForbidden:
		return prompts.CodeForbidden
	case http.StatusNotFound:
		return prompts.CodeNotFound
	case http.StatusConflict:
		return prompts.CodeConflict
	case http.StatusGone:
		return prompts.CodeEventsExpired
	case http.StatusPreconditionFailed:
		return prompts.CodePreconditionFailed
	case http.StatusUnprocessableEntity:
		return prompts.CodeIdempotencyKeyReused
	case http.StatusNotImplemented:
		return ""
	}
	if retryableStatus(status) {
		return prompts.CodeUnavailable
	}
	return prompts.CodeInternal
}

// isJSON reports whether a Content-Type is JSON (application/json or
// application/problem+json, or any +json).
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
