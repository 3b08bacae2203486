package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// getBuf returns a response buffer from the pool; putBuf gives it back.
func (h *Handler) getBuf() *[]byte { return h.bufs.Get().(*[]byte) }

func (h *Handler) putBuf(bp *[]byte, b []byte) {
	if cap(b) > 1<<20 {
		return // let a rare huge buffer go rather than keep it forever
	}
	*bp = b[:0]
	h.bufs.Put(bp)
}

// writeJSON writes b, a JSON document, as a 200 response.
func (h *Handler) writeJSON(w http.ResponseWriter, b []byte) {
	hd := w.Header()
	hd["Content-Type"] = h.hdrJSON
	hd["Content-Length"] = []string{strconv.Itoa(len(b))}
	hd["Cache-Control"] = h.hdrCache
	w.WriteHeader(http.StatusOK)
	w.Write(b) //nolint:errcheck // the client went away; nothing to do
}

// setNextLink sets the Link header to the page after the item with id
// after: a relative reference holding only a query ("?limit=2&after=…"),
// resolved by the client against the URL it asked for (RFC 8288, RFC 3986
// section 5.2). So it names the right path however the handler is mounted:
// at the root, under http.StripPrefix, or behind a proxy that rewrites
// paths. The request's other query parameters are kept, in order.
func setNextLink(w http.ResponseWriter, r *http.Request, after string) {
	var b strings.Builder
	b.WriteString("<?")
	raw := r.URL.RawQuery
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || key == "after" {
			continue
		}
		b.WriteString(url.QueryEscape(key))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(val))
		b.WriteByte('&')
	}
	b.WriteString("after=")
	b.WriteString(url.QueryEscape(after))
	b.WriteString(`>; rel="next"`)
	w.Header()["Link"] = []string{b.String()}
}

// writeList answers one page of a list, or the error that ended it: the
// items as a JSON array, with a Link to the next page when more follow.
// add appends an item's JSON; id gives its id, the next page's position.
func writeList[T any](h *Handler, w http.ResponseWriter, r *http.Request, list []T, more bool, err error, add func([]byte, T) []byte, id func(T) string) {
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	if more && len(list) > 0 {
		setNextLink(w, r, id(list[len(list)-1]))
	}
	bp := h.getBuf()
	b := append((*bp)[:0], '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = add(b, v)
	}
	b = append(b, ']')
	h.writeJSON(w, b)
	h.putBuf(bp, b)
}

// writeValue answers 200 with the JSON of v, one resource, that add
// appends.
func writeValue[T any](h *Handler, w http.ResponseWriter, v T, add func([]byte, T) []byte) {
	bp := h.getBuf()
	b := add((*bp)[:0], v)
	h.writeJSON(w, b)
	h.putBuf(bp, b)
}
