package httpapi

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// listEvents is GET /events?after=&project_id=&limit=: a page of the
// event log as JSON, or, when Accept names text/event-stream, the stream
// of the events (stream.go).
func (h *Handler) listEvents() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.events == nil {
			h.problem(w, kindNotImplemented, "this server's store keeps no event log", nil)
			return
		}
		stream := wantsStream(r.Header["Accept"])
		if !stream && h.refused(w) {
			return
		}
		raw := r.URL.RawQuery
		var q queryFields
		var f prompts.EventFilter
		v, given, fe := queryParam(raw, "limit")
		q.add(fe)
		if given && fe == nil {
			n, ok := parseCount(v)
			if !ok || n < 1 || n > prompts.MaxLimit {
				q.add(&prompts.FieldError{Field: "limit", Detail: "must be an integer from 1 to 1000"})
			}
			f.Limit = n
		}
		v, given, fe = queryParam(raw, "after")
		q.add(fe)
		if given && fe == nil {
			f.After = q.eventID("after", v)
		}
		if stream {
			if ids := r.Header["Last-Event-Id"]; len(ids) > 1 {
				q.add(&prompts.FieldError{Field: "Last-Event-ID", Detail: "is given more than once"})
			} else if len(ids) == 1 && ids[0] != "" {
				// A client reconnecting sends the last id it saw: it wins
				// over the after of the URL it reconnects to.
				f.After = q.eventID("Last-Event-ID", ids[0])
			}
		}
		projectID, projectGiven, fe := queryParam(raw, "project_id")
		q.add(fe)
		if projectGiven && fe == nil {
			// The rules of list 5's project_id: a malformed id is not
			// found, a NUL or bad UTF-8 is invalid.
			q.addErr(prompts.PromptFilter{ProjectIDs: []string{projectID}}.Validate())
		}
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		if projectGiven {
			if !a.Allows(projectID) {
				h.notFoundAs(w, "project")
				return
			}
			if _, err := h.store.GetProject(r.Context(), projectID); err != nil {
				h.storeError(w, r, err)
				return
			}
			f.ProjectIDs = []string{projectID}
		} else {
			f.ProjectIDs = a.visible()
		}
		if stream {
			h.stream(w, r, a, f)
			return
		}
		list, more, err := h.events.ListEvents(r.Context(), f)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		pg, list, ok := startPage(h, w, list, &more)
		if !ok {
			return
		}
		defer h.endPage(&pg)
		b := pg.b
		n := 0
		for i, e := range list {
			start := len(b)
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = api.AppendEvent(b, e); err != nil {
				pg.b = b
				h.storeError(w, r, prompts.Internal(err))
				return
			}
			if len(b)+1 > MaxListBody && i > 0 { // the rest on the next page
				b, more = b[:start], true
				break
			}
			n = i + 1
		}
		b = append(b, ']')
		if more && n > 0 {
			setNextLink(w, r, strconv.FormatInt(list[n-1].ID, 10))
		}
		h.writePage(w, &pg, b)
	}
}

// eventID parses an event id: the decimal digits of a positive integer
// (at most 18, so that it fits an int64 with room to spare).
func (q *queryFields) eventID(field, v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || len(v) > 18 || strings.TrimLeft(v, "0123456789") != "" {
		q.add(&prompts.FieldError{Field: field, Detail: "must be an event id: the decimal digits of a positive integer"})
		return 0
	}
	return n
}

// IsEventStream reports whether r asks for the event stream of GET
// /v1/integration/events (its Accept header names text/event-stream, with
// a q above 0). A stream lasts until the client leaves or CloseStreams: an
// application that puts a deadline on every request's context leaves
// these out.
func IsEventStream(r *http.Request) bool { return wantsStream(r.Header["Accept"]) }

// wantsStream reports whether an Accept header names text/event-stream
// (with a q above 0): the client asks for the stream, whatever else it
// accepts. A missing Accept, */* or application/json gets the JSON list.
func wantsStream(accept []string) bool {
	for _, v := range accept {
		for v != "" {
			var item string
			item, v, _ = strings.Cut(v, ",")
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(item))
			if err != nil || mt != "text/event-stream" {
				continue
			}
			if qv, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(qv, 64); err != nil || f <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}
