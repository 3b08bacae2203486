package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// kind is what a problem is: its HTTP status and its code member.
type kind struct {
	status int
	code   string
}

// kindOf is the one table from the domain's error codes to problems: the
// Store's errors, and the handler's own that the domain names (invalid
// input, not found). A code it does not know is internal.
func kindOf(c prompts.Code) kind {
	switch c {
	case prompts.CodeInvalid:
		return kind{http.StatusBadRequest, "invalid_request"}
	case prompts.CodeNotFound:
		return kind{http.StatusNotFound, "not_found"}
	case prompts.CodeConflict:
		return kind{http.StatusConflict, "conflict"}
	case prompts.CodeUnavailable:
		return kind{http.StatusServiceUnavailable, "unavailable"}
	case prompts.CodeVariablesChanged:
		return kind{http.StatusConflict, "variables_changed"}
	case prompts.CodePartialUnavailable:
		return kind{http.StatusConflict, "partial_unavailable"}
	case prompts.CodePartialInUse:
		return kind{http.StatusConflict, "partial_in_use"}
	case prompts.CodePreconditionFailed:
		return kind{http.StatusPreconditionFailed, "precondition_failed"}
	case prompts.CodeIdempotencyKeyReused:
		return kind{http.StatusUnprocessableEntity, "idempotency_key_reused"}
	case prompts.CodeEventsExpired:
		return kind{http.StatusGone, "events_expired"}
	case prompts.CodeForbidden: // a role below the one needed, or a protected environment
		return kindForbidden
	default:
		return kindInternal
	}
}

// The problems that only HTTP has.
var (
	kindUnauthenticated  = kind{http.StatusUnauthorized, "unauthenticated"}
	kindForbidden        = kind{http.StatusForbidden, "forbidden"}
	kindMethodNotAllowed = kind{http.StatusMethodNotAllowed, "method_not_allowed"}
	kindTooLarge         = kind{http.StatusRequestEntityTooLarge, "payload_too_large"}
	kindMediaType        = kind{http.StatusUnsupportedMediaType, "unsupported_media_type"}
	kindInternal         = kind{http.StatusInternalServerError, "internal"}
	kindTimeout          = kind{http.StatusRequestTimeout, "request_timeout"}
	// kindNotImplemented: the Store lacks what the route needs (the event
	// log, webhooks): it keeps no such thing (prompts.EventLogOf), or
	// says errors.ErrUnsupported.
	kindNotImplemented = kind{http.StatusNotImplemented, "not_implemented"}
)

// Details of the problems whose text never varies.
const (
	detailUnauthenticated = "a valid API key is required in the X-API-Key header"
	detailInternal        = "the server failed to answer; the cause is logged"
	detailUnavailable     = "the service is unavailable for a moment; retry later"
	detailNotImplemented  = "this server's store keeps no event log or webhooks"
)

// MaxProblemErrors is the most entries the errors member of a problem
// lists; when there are more, the detail gives their number. So a request
// that breaks many rules at once (a render with 90,000 unknown variables)
// gets a small answer.
const MaxProblemErrors = 100

// problem writes an RFC 9457 problem details response: type, title,
// status, detail, code, and errors when fields is not empty (at most
// MaxProblemErrors of them). It is the one writer of every error response.
func (h *Handler) problem(w http.ResponseWriter, k kind, detail string, fields []prompts.FieldError) {
	if n := len(fields); n > MaxProblemErrors {
		fields = fields[:MaxProblemErrors]
		detail += " (" + strconv.Itoa(n) + " errors in all; the first " + strconv.Itoa(MaxProblemErrors) + " are listed)"
	}
	bp := h.getBuf()
	b := appendJSON((*bp)[:0], api.Problem{
		Type: "about:blank", Title: http.StatusText(k.status), Status: k.status, Detail: detail, Code: k.code,
		Errors: api.FieldErrors(fields),
	})
	hd := w.Header()
	hd["Content-Type"] = h.hdrProblem
	hd["Content-Length"] = []string{strconv.Itoa(len(b))}
	hd["Cache-Control"] = h.hdrCache
	delete(hd, "Etag")
	w.WriteHeader(k.status)
	w.Write(b) //nolint:errcheck // the client went away; nothing to do
	h.putBuf(bp, b)
}

func (h *Handler) unauthenticated(w http.ResponseWriter) {
	w.Header()["Www-Authenticate"] = []string{`APIKey header="X-API-Key"`}
	h.problem(w, kindUnauthenticated, detailUnauthenticated, nil)
}

// forbidden answers 403 for a request that needs a role the key has not.
func (h *Handler) forbidden(w http.ResponseWriter, need Role) {
	h.problem(w, kindForbidden, "this request needs the "+need.String()+" role", nil)
}

// invalid answers 400 for invalid fields; the detail names them.
func (h *Handler) invalid(w http.ResponseWriter, fields []prompts.FieldError) {
	h.problem(w, kindOf(prompts.CodeInvalid), invalidDetail(fields), fields)
}

// invalidDetail names the invalid fields, at most MaxProblemErrors of
// them, as problem lists them.
func invalidDetail(fields []prompts.FieldError) string {
	var b strings.Builder
	b.WriteString("invalid input: ")
	for i, f := range fields[:min(len(fields), MaxProblemErrors)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field)
		b.WriteString(" ")
		b.WriteString(f.Detail)
	}
	return b.String()
}

// storeError answers an error that the Store or the Authenticator
// returned, after telling the error observer (WithErrorObserver).
func (h *Handler) storeError(w http.ResponseWriter, r *http.Request, err error) {
	h.report(r, err)
	h.answer(w, r, err)
}

// invalidInput answers the invalid-input error of one of the domain's
// rules (an input's Validate, a Render): 400 naming the fields.
func (h *Handler) invalidInput(w http.ResponseWriter, r *http.Request, err error) {
	h.answer(w, r, err)
}

// answer answers err by its code. Invalid input names its fields; not
// found and conflict show the error's message, which the Store contract
// keeps free of internals; 503 and 500 show a fixed text and log the
// cause.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errors.ErrUnsupported) {
		h.problem(w, kindNotImplemented, detailNotImplemented, nil)
		return
	}
	var e *prompts.Error
	isErr := errors.As(err, &e)
	k := kindOf(prompts.ErrorCode(err))
	switch k.status {
	case http.StatusBadRequest:
		if isErr && len(e.Fields) > 0 {
			h.invalid(w, e.Fields)
			return
		}
		h.problem(w, k, "invalid input", nil)
	case http.StatusServiceUnavailable:
		// Debug, not Warn: in an outage every request fails alike, and a
		// line each would bury the log. Watch the store's state instead
		// (see WithLogger and WithErrorObserver).
		h.log.DebugContext(r.Context(), "httpapi: unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header()["Retry-After"] = []string{"1"}
		h.problem(w, k, detailUnavailable, nil)
	case http.StatusInternalServerError:
		h.log.ErrorContext(r.Context(), "httpapi: internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		h.problem(w, k, detailInternal, nil)
	default: // the message is the Store's own, free of internals
		detail := e.Message
		if detail == "" {
			detail = strings.ToLower(http.StatusText(k.status))
		}
		h.problem(w, k, detail, e.Fields) // the guard's names what it refused
	}
}

// notFoundAs answers 404 exactly as the store answers an unknown thing of
// this kind ("prompt", "project"), so that a resource a key may not see
// looks the same as one that does not exist.
func (h *Handler) notFoundAs(w http.ResponseWriter, what string) {
	h.problem(w, kindOf(prompts.CodeNotFound), what+" not found", nil)
}
