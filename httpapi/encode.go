package httpapi

import (
	"bytes"
	"hash/maphash"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/internal/wire"
)

// maxPooledBuf is the largest response buffer the pool keeps.
const maxPooledBuf = 1 << 20

// getBuf returns a response buffer from the pool; putBuf gives it back.
func (h *Handler) getBuf() *[]byte { return h.bufs.Get().(*[]byte) }

func (h *Handler) putBuf(bp *[]byte, b []byte) {
	if cap(b) > maxPooledBuf {
		return // let a rare huge buffer go rather than keep it forever
	}
	*bp = b[:0]
	h.bufs.Put(bp)
}

// writeJSON writes b, a JSON document, as a 200 response: the answer of
// a change that was made, or of a read whose size the Store's bounds keep
// small. It is counted among the answers being written (see
// WithMaxAnswerMemory), never refused: a client that retried a change it
// saw refused might make it twice.
func (h *Handler) writeJSON(w http.ResponseWriter, b []byte) {
	h.budget.take(int64(len(b)), true)
	defer h.budget.give(int64(len(b)))
	h.writeBody(w, b)
}

// writeRead writes b, the answer of a read, as a 200 response, or 503
// with Retry-After when it does not fit in what remains of the memory for
// answers being written (WithMaxAnswerMemory).
func (h *Handler) writeRead(w http.ResponseWriter, b []byte) {
	if !h.budget.take(int64(len(b)), false) {
		h.tooManyAnswers(w)
		return
	}
	defer h.budget.give(int64(len(b)))
	h.writeBody(w, b)
}

func (h *Handler) writeBody(w http.ResponseWriter, b []byte) {
	hd := w.Header()
	hd["Content-Type"] = h.hdrJSON
	hd["Content-Length"] = []string{strconv.Itoa(len(b))}
	hd["Cache-Control"] = h.hdrCache
	w.WriteHeader(http.StatusOK)
	w.Write(b) //nolint:errcheck // the client went away; nothing to do
}

// refused answers 503 with Retry-After, and reports true, when the
// answers being written hold all the memory for answers: a read checks
// it before it reads the store, so that a read refused costs nothing.
func (h *Handler) refused(w http.ResponseWriter) bool {
	if h.budget.used.Load() < h.budget.limit {
		return false
	}
	h.tooManyAnswers(w)
	return true
}

// tooManyAnswers answers 503 with Retry-After: the answers being written
// hold the memory WithMaxAnswerMemory allows.
func (h *Handler) tooManyAnswers(w http.ResponseWriter) {
	h.log.Debug("httpapi: the answers being written hold all the memory allowed; a read is refused", "max_answer_memory", h.budget.limit)
	hd := w.Header()
	delete(hd, "Link")
	hd["Retry-After"] = []string{"1"}
	h.problem(w, kindOf(prompts.CodeUnavailable), "the server is writing as many answers as its memory allows; retry in a moment", nil)
}

// DefaultMaxAnswerMemory is how many bytes of answers the handler holds
// while they are being written, at most, unless WithMaxAnswerMemory says
// otherwise: 256 MiB.
const DefaultMaxAnswerMemory = 256 << 20

// WithMaxAnswerMemory sets how many bytes of answers the handler holds at
// once while clients read them, at most (values below 1 keep
// DefaultMaxAnswerMemory). A read is answered 503 with Retry-After: 1
// before it reads the store when the answers being written already hold
// all of it, and when its answer would pass it, unless it is the only
// answer being written. A snapshot is counted a part at a time as it is
// written; a page of a list is counted from before it is built, by the
// size of its items (see MaxListBody), then by the buffer that holds it. The answers of changes are counted but never
// refused, and so is the rest of a snapshot already under way, so the
// count may pass the bound by what those hold. Slow clients that read
// large answers can so make other reads wait, never make the server's
// memory grow without bound.
func WithMaxAnswerMemory(n int64) Option {
	return func(h *Handler) {
		if n > 0 {
			h.budget.limit = n
		}
	}
}

// answerBudget counts the bytes of the answers being written.
type answerBudget struct {
	limit int64
	used  atomic.Int64
}

// take counts n bytes in. Unless must, it refuses them (reports false,
// counting nothing) when they would take the count past the limit and
// other answers are being written.
func (b *answerBudget) take(n int64, must bool) bool {
	if must {
		b.used.Add(n)
		return true
	}
	for {
		u := b.used.Load()
		if u > 0 && u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// give counts n bytes, taken before, out.
func (b *answerBudget) give(n int64) { b.used.Add(-n) }

// writeActive answers a read of a prompt in an environment: 200 with its
// body and strong ETag, or 304 with no body when the request's
// If-None-Match holds that tag. The tag derives from the prompt's revision
// (see the package doc), so a 304 is decided before any encoding. The tag
// and the length share one allocation, and so do their header values.
func (h *Handler) writeActive(w http.ResponseWriter, r *http.Request, a prompts.ActivePrompt) {
	var tmp [112]byte // the longest tag: a long environment's, of a split
	t := wire.AppendETag(tmp[:0], a)
	hd := w.Header()
	hd["Cache-Control"] = h.hdrCache
	if noneMatch(r.Header["If-None-Match"], t) {
		hd["Etag"] = []string{string(t)}
		w.WriteHeader(http.StatusNotModified)
		return
	}
	e := h.answers.get(t)
	if e == nil {
		bp := h.getBuf()
		b := appendActive((*bp)[:0], a)
		e = newEncoded(t, b)
		h.putBuf(bp, b)
		h.answers.put(e)
	}
	if n := int64(len(e.body)); n > maxCachedAnswer { // this read's own copy
		if !h.budget.take(n, false) {
			h.tooManyAnswers(w)
			return
		}
		defer h.budget.give(n)
	}
	hd["Etag"] = e.vals[0:1:1]
	hd["Content-Type"] = h.hdrJSON
	hd["Content-Length"] = e.vals[1:2:2]
	w.WriteHeader(http.StatusOK)
	w.Write(e.body) //nolint:errcheck // the client went away; nothing to do
}

// encoded is a read's answer, encoded: its body and the values of its
// ETag and Content-Length headers.
type encoded struct {
	vals []string // the ETag, then the Content-Length
	body []byte
}

func newEncoded(tag, body []byte) *encoded {
	n := len(tag)
	t := strconv.AppendInt(tag, int64(len(body)), 10)
	s := string(t)
	return &encoded{vals: []string{s[:n], s[n:]}, body: bytes.Clone(body)}
}

// answerCache keeps the latest encoded answers of reads of a prompt in an
// environment, by ETag. The tag is strong: it names one representation
// (one revision of one prompt, in one environment, in one form), so the
// bytes made for it answer every later read that gets the same tag, and
// the JSON is encoded once per change instead of once per read. It is
// direct-mapped: a slot per hash of the tag, the newest answer winning, so
// it takes no lock and is bounded, answerSlots answers of at most
// maxCachedAnswer bytes (16 MiB).
type answerCache struct {
	seed  maphash.Seed
	slots [answerSlots]atomic.Pointer[encoded]
}

const (
	answerSlots     = 512
	maxCachedAnswer = 32 << 10
)

func (c *answerCache) slot(tag []byte) *atomic.Pointer[encoded] {
	return &c.slots[maphash.Bytes(c.seed, tag)%answerSlots]
}

// get returns the answer with this tag, or nil.
func (c *answerCache) get(tag []byte) *encoded {
	if e := c.slot(tag).Load(); e != nil && e.vals[0] == string(tag) {
		return e
	}
	return nil
}

// put keeps e, unless it is too large.
func (c *answerCache) put(e *encoded) {
	if len(e.body) <= maxCachedAnswer {
		c.slot([]byte(e.vals[0])).Store(e)
	}
}

// writeChanged answers a change of what an environment points at: 200
// with the prompt as a read of that environment answers it, and its ETag,
// for the next change's If-Match.
func (h *Handler) writeChanged(w http.ResponseWriter, a prompts.ActivePrompt) {
	hd := w.Header()
	hd["Etag"] = []string{string(wire.AppendETag(nil, a))}
	writeValue(h, w, a, appendActive)
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

// MaxListBody is the most bytes of JSON a list answer holds: a page
// whose items would take it further holds fewer items than its limit,
// with a Link to the next page as when more follow (a page holds one item
// at least, whatever its size). So a client that asks for many large
// items (a thousand versions of a megabyte each) gets them a few at a
// time rather than making the server build a huge answer.
const MaxListBody = 4 << 20

// writeList answers one page of a list, or the error that ended it: the
// items as a JSON array, with a Link to the next page when more follow.
// add appends an item's JSON; id gives its id, the next page's position.
// The page is counted among the answers being written from before it is
// built (startPage).
func writeList[T any](h *Handler, w http.ResponseWriter, r *http.Request, list []T, more bool, err error, add func([]byte, T) []byte, id func(T) string) {
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
	for i, v := range list {
		start := len(b)
		if i > 0 {
			b = append(b, ',')
		}
		b = add(b, v)
		if len(b)+1 > MaxListBody && i > 0 {
			b, more = b[:start], true
			break
		}
		n = i + 1
	}
	b = append(b, ']')
	if more && n > 0 {
		setNextLink(w, r, id(list[n-1]))
	}
	h.writePage(w, &pg, b)
}

// page is a list answer being built and written: its buffer, and what it
// counts among the answers being written.
type page struct {
	bp   *[]byte // the pooled buffer, or nil: b is the page's own
	b    []byte
	held int64
}

// startPage starts a page of the items of list: it counts what the page
// will hold among the answers being written before any is encoded, from
// the size of its items (itemSize) and the room the JSON encoder keeps,
// or answers 503 (reporting false) when that does not fit. It returns
// the page, its buffer holding '[', and the items it holds: those that
// fit in MaxListBody by their size, one at least; with fewer than list,
// *more is set. A large page is built in a buffer of its own, of that
// size, so that the encoder does not double it.
func startPage[T any](h *Handler, w http.ResponseWriter, list []T, more *bool) (page, []T, bool) {
	est, n := 2, 0 // the brackets
	for i := range list {
		s := itemSize(list, i) + 1
		if est+s > MaxListBody && i > 0 {
			*more = true
			break
		}
		est, n = est+s, i+1
	}
	// The encoder keeps a quarter of what it wrote free in the buffer.
	size := est + est/4 + 1
	if !h.budget.take(int64(size), false) {
		h.tooManyAnswers(w)
		return page{}, nil, false
	}
	pg := page{held: int64(size)}
	if size <= maxPooledBuf {
		pg.bp = h.getBuf()
		pg.b = (*pg.bp)[:0]
	} else {
		pg.b = make([]byte, 0, size)
	}
	pg.b = append(pg.b, '[')
	return pg, list[:n], true
}

// writePage writes b, the page built in pg's buffer, as a 200 response.
// While it is written, it counts what its buffer holds: a buffer of its
// own whole, a pooled one (at most maxPooledBuf) for the bytes of the
// answer.
func (h *Handler) writePage(w http.ResponseWriter, pg *page, b []byte) {
	pg.b = b
	c := int64(cap(b))
	if pg.bp != nil {
		c = int64(len(b))
	}
	if c > pg.held {
		h.budget.take(c-pg.held, true)
	} else {
		h.budget.give(pg.held - c)
	}
	pg.held = c
	h.writeBody(w, b)
}

// endPage counts pg out and gives its buffer back.
func (h *Handler) endPage(pg *page) {
	h.budget.give(pg.held)
	if pg.bp != nil {
		h.putBuf(pg.bp, pg.b)
	}
}

// itemSize estimates the bytes of the JSON of list[i]: its text and a
// constant for the rest. A version's content makes most of it, in a list
// of versions or of events; the items of other lists are small.
func itemSize[T any](list []T, i int) int {
	switch l := any(list).(type) {
	case []prompts.PromptVersion:
		return versionSize(&l[i])
	case []prompts.Event:
		if v := l[i].Version; v != nil {
			return versionSize(v)
		}
	}
	return 512
}

func versionSize(v *prompts.PromptVersion) int {
	n := 512 + len(v.Content) + len(v.Metadata)
	if v.ChangeSummary != nil {
		n += len(*v.ChangeSummary)
	}
	for _, name := range v.Variables {
		n += len(name) + 3
	}
	return n
}

// writeValue answers 200 with the JSON of v, one resource, that add
// appends.
func writeValue[T any](h *Handler, w http.ResponseWriter, v T, add func([]byte, T) []byte) {
	bp := h.getBuf()
	b := add((*bp)[:0], v)
	h.writeJSON(w, b)
	h.putBuf(bp, b)
}

// readValue is writeValue for a read: 503 when the answer does not fit
// in the memory for answers (writeRead).
func readValue[T any](h *Handler, w http.ResponseWriter, v T, add func([]byte, T) []byte) {
	bp := h.getBuf()
	b := add((*bp)[:0], v)
	h.writeRead(w, b)
	h.putBuf(bp, b)
}

// The encoders of the answers: the api type of a resource, as api.Append
// writes it. Marshaling fails only on metadata that is not JSON, which no
// Store keeps (they validate it); b is then returned as it was.

func appendJSON[T any](b []byte, v T) []byte {
	b, _ = api.Append(b, v)
	return b
}

func appendActive(b []byte, a prompts.ActivePrompt) []byte { return api.AppendActive(b, a) }
func appendPrompt(b []byte, p prompts.Prompt) []byte       { return appendJSON(b, api.FromPrompt(p)) }
func appendProject(b []byte, p prompts.Project) []byte     { return appendJSON(b, api.FromProject(p)) }
func appendVersion(b []byte, v prompts.PromptVersion) []byte {
	return appendJSON(b, api.FromVersion(v))
}
func appendVersionDetail(b []byte, v prompts.PromptVersion) []byte {
	return appendJSON(b, api.FromVersionDetail(v))
}
func appendDeployment(b []byte, d prompts.Deployment) []byte {
	return appendJSON(b, api.FromDeployment(d))
}
