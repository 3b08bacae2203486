package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/promptkit/prompts"
)

// idempotency reads the Idempotency-Key header of a POST that writes: the
// key, scoped to the API key's name, and what the request asks (its
// method, path with query, and body). A header that is not a valid key is
// answered 400 (ok is false). No header is the zero Idempotency.
//
// The key is 1 to 255 printable ASCII characters; the quoted form of the
// IETF draft ("abc") is the same key as abc.
func (h *Handler) idempotency(w http.ResponseWriter, r *http.Request, a Access, body []byte) (prompts.Idempotency, bool) {
	values := r.Header.Values("Idempotency-Key")
	if len(values) == 0 {
		return prompts.Idempotency{}, true
	}
	bad := func(detail string) (prompts.Idempotency, bool) {
		h.invalid(w, []prompts.FieldError{{Field: "Idempotency-Key", Detail: detail}})
		return prompts.Idempotency{}, false
	}
	if len(values) > 1 {
		return bad("must be given once")
	}
	key := values[0]
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		key = key[1 : len(key)-1]
	}
	if !prompts.ValidIdempotencyKey(key) {
		return bad("must be 1 to " + strconv.Itoa(prompts.MaxIdempotencyKey) + " printable ASCII characters")
	}
	sum := sha256.New()
	sum.Write([]byte(r.Method + " " + r.URL.EscapedPath() + "?" + r.URL.RawQuery + "\n"))
	sum.Write(body)
	return prompts.Idempotency{Key: key, Scope: a.Name, Request: hex.EncodeToString(sum.Sum(nil))}, true
}

// replayed marks the answer to a repeated write.
func replayed(w http.ResponseWriter, yes bool) {
	if yes {
		w.Header()["Idempotent-Replayed"] = []string{"true"}
	}
}
