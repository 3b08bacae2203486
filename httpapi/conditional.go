package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
)

// writeActive answers a read of a prompt in an environment: 200 with its
// body and strong ETag, or 304 with no body when the request's
// If-None-Match holds that tag. The tag derives from the prompt's revision
// (see the package doc), so a 304 is decided before any encoding. The tag
// and the length share one allocation, and so do their header values.
func (h *Handler) writeActive(w http.ResponseWriter, r *http.Request, a prompts.ActivePrompt) {
	var tmp [80]byte
	t := wire.AppendETag(tmp[:0], a)
	hd := w.Header()
	hd["Cache-Control"] = h.hdrCache
	if noneMatch(r.Header["If-None-Match"], t) {
		hd["Etag"] = []string{string(t)}
		w.WriteHeader(http.StatusNotModified)
		return
	}
	bp := h.getBuf()
	b := wire.AppendActive((*bp)[:0], a)
	n := len(t)
	t = strconv.AppendInt(t, int64(len(b)), 10)
	s := string(t)
	vals := make([]string, 2)
	vals[0], vals[1] = s[:n], s[n:]
	hd["Etag"] = vals[0:1:1]
	hd["Content-Type"] = h.hdrJSON
	hd["Content-Length"] = vals[1:2:2]
	w.WriteHeader(http.StatusOK)
	w.Write(b) //nolint:errcheck // the client went away; nothing to do
	h.putBuf(bp, b)
}

// writeChanged answers a change of what an environment points at: 200
// with the prompt as a read of that environment answers it, and its ETag,
// for the next change's If-Match.
func (h *Handler) writeChanged(w http.ResponseWriter, a prompts.ActivePrompt) {
	hd := w.Header()
	hd["Etag"] = []string{string(wire.AppendETag(nil, a))}
	writeValue(h, w, a, wire.AppendActive)
}

// noRevision is the revision a change asks for when no tag of its
// If-Match can be current: no prompt ever has it.
const noRevision = math.MaxInt64

// ifRevision reads an If-Match header (its values, each a comma-separated
// list) for a change of env of promptID: 0 when there is none or it is
// "*" (the prompt exists: the Store checks that), else the revision the
// change must find. That is the largest revision among the strong tags
// of this prompt and environment: a prompt's revision never goes back, so
// it is at least every revision a client was ever sent, and if one of the
// tags is current it is the largest. With no such tag, no revision can
// match (noRevision): a weak tag never does, as RFC 9110 asks.
func ifRevision(values []string, promptID string, env prompts.Environment) int64 {
	if len(values) == 0 {
		return 0
	}
	var best int64
	for _, v := range values {
		for v != "" {
			var item string
			item, v, _ = strings.Cut(v, ",")
			item = strings.TrimSpace(item)
			if item == "*" {
				return 0
			}
			id, e, rev, ok := wire.ParseETag(item)
			if ok && id == promptID && e == env {
				best = max(best, rev)
			}
		}
	}
	if best == 0 {
		return noRevision
	}
	return best
}

// noneMatch reports whether an If-None-Match header (its values, each a
// comma-separated list) holds tag or is "*". As RFC 9110 asks for
// If-None-Match, the comparison is weak: W/"x" matches "x".
func noneMatch(values []string, tag []byte) bool {
	for _, v := range values {
		for v != "" {
			var item string
			item, v, _ = strings.Cut(v, ",")
			item = strings.TrimSpace(item)
			if item == "*" {
				return true
			}
			item = strings.TrimPrefix(item, "W/")
			if item == string(tag) {
				return true
			}
		}
	}
	return false
}
