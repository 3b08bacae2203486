package httpapi

import (
	"math"
	"net/http"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
)

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

// setPromptETag sends, with the answer to a create or an update of a
// prompt, the ETag that a read of the prompt (GET /prompts/{id}, in
// production, without a subject) sends at the revision p has, as RFC 5789
// does for PATCH: so that a client learns the revision its write made
// (the body's fixed fields hold none) without reading the prompt again.
// That tag names the version production serves when it holds a split, so
// production is read (fresh, past any cache) after the write of a prompt
// that has versions; when that read fails, or finds a later revision
// (another change came between), the tag is the revision's without a
// version: If-Match takes it as well (it compares revisions), and a read
// with it as If-None-Match is answered in full.
func (h *Handler) setPromptETag(w http.ResponseWriter, r *http.Request, p prompts.Prompt) {
	a := prompts.ActivePrompt{Prompt: p, Environment: prompts.Production}
	if p.LatestVersionID != "" { // without versions, nothing is active: no split
		got, _, err := prompts.ReadActive(r.Context(), h.store, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Shared: true, Fresh: true})
		if err == nil && got.Revision == p.Revision {
			a = got
		}
	}
	w.Header()["Etag"] = []string{string(wire.AppendETag(nil, a))}
}
