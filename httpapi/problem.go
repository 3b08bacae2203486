package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
)

// statusOf is the one table from the domain's error codes to HTTP status.
// A code it does not know is internal.
func statusOf(c prompts.Code) int {
	switch c {
	case prompts.CodeInvalid:
		return http.StatusBadRequest
	case prompts.CodeNotFound:
		return http.StatusNotFound
	case prompts.CodeConflict:
		return http.StatusConflict
	case prompts.CodeUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// problemCode is the code member of a problem with this status.
func problemCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request"
	case http.StatusUnauthorized:
		return "unauthenticated"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusConflict:
		return "conflict"
	case http.StatusRequestEntityTooLarge:
		return "payload_too_large"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusServiceUnavailable:
		return "unavailable"
	default:
		return "internal"
	}
}

// Details of the problems whose text never varies.
const (
	detailUnauthenticated = "a valid API key is required in the X-API-Key header"
	detailInternal        = "the server failed to answer; the cause is logged"
	detailUnavailable     = "the service is unavailable for a moment; retry later"
)

// problem writes an RFC 9457 problem details response: type, title,
// status, detail, code, and errors when fields is not empty. It is the one
// writer of every error response.
func (h *Handler) problem(w http.ResponseWriter, status int, detail string, fields []prompts.FieldError) {
	bp := h.getBuf()
	b := append((*bp)[:0], `{"type":"about:blank","title":`...)
	b = prompts.AppendString(b, http.StatusText(status))
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"detail":`...)
	b = prompts.AppendString(b, detail)
	b = append(b, `,"code":`...)
	b = prompts.AppendString(b, problemCode(status))
	if len(fields) > 0 {
		b = append(b, `,"errors":[`...)
		for i, f := range fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"field":`...)
			b = prompts.AppendString(b, f.Field)
			b = append(b, `,"detail":`...)
			b = prompts.AppendString(b, f.Detail)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	hd := w.Header()
	hd["Content-Type"] = h.hdrProblem
	hd["Content-Length"] = []string{strconv.Itoa(len(b))}
	hd["Cache-Control"] = h.hdrCache
	delete(hd, "Etag")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck // the client went away; nothing to do
	h.putBuf(bp, b)
}

func (h *Handler) unauthenticated(w http.ResponseWriter) {
	w.Header()["Www-Authenticate"] = []string{`APIKey header="X-API-Key"`}
	h.problem(w, http.StatusUnauthorized, detailUnauthenticated, nil)
}

// invalid answers 400 for invalid fields; the detail names them.
func (h *Handler) invalid(w http.ResponseWriter, fields []prompts.FieldError) {
	h.problem(w, http.StatusBadRequest, invalidDetail(fields), fields)
}

func invalidDetail(fields []prompts.FieldError) string {
	var b strings.Builder
	b.WriteString("invalid input: ")
	for i, f := range fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field)
		b.WriteString(" ")
		b.WriteString(f.Detail)
	}
	return b.String()
}

// storeError answers an error of the store (or of the authenticator) by
// its code. Not found and conflict show the error's message, which the
// Store contract keeps free of internals; 503 and 500 show a fixed text and
// log the cause.
func (h *Handler) storeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *prompts.Error
	isErr := errors.As(err, &e)
	status := statusOf(prompts.ErrorCode(err))
	switch status {
	case http.StatusBadRequest:
		if isErr && len(e.Fields) > 0 {
			h.invalid(w, e.Fields)
			return
		}
		h.problem(w, status, "invalid input", nil)
	case http.StatusNotFound, http.StatusConflict:
		detail := e.Message
		if detail == "" {
			detail = strings.ToLower(http.StatusText(status))
		}
		h.problem(w, status, detail, nil)
	case http.StatusServiceUnavailable:
		h.log.WarnContext(r.Context(), "httpapi: unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header()["Retry-After"] = []string{"1"}
		h.problem(w, status, detailUnavailable, nil)
	default:
		h.log.ErrorContext(r.Context(), "httpapi: internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		h.problem(w, http.StatusInternalServerError, detailInternal, nil)
	}
}

// notFoundAs answers 404 exactly as the store answers an unknown thing of
// this kind ("prompt", "project"), so that a resource a key may not see
// looks the same as one that does not exist.
func (h *Handler) notFoundAs(w http.ResponseWriter, what string) {
	h.problem(w, http.StatusNotFound, what+" not found", nil)
}
