package client

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
)

// What every call shares: its paths, bodies, answers and pages.

func promptPath(id string) string { return "/prompts/" + url.PathEscape(id) }

func envPath(id string, env prompts.Environment) string {
	return promptPath(id) + "/environments/" + url.PathEscape(string(env))
}

// keyPath escapes a prompt's key for the path of a read by key: each
// segment between slashes escaped, the slashes kept, so that proxies that
// refuse an escaped slash pass it. ok is false for a key with an empty,
// "." or ".." segment: a router cleans such a path, escaped or not, and
// the interface answers it 404.
func keyPath(key string) (path string, ok bool) {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", false
		}
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/"), true
}

// body builds a request's JSON object, strings escaped as the interface
// writes them, metadata passed as its raw text.
type body struct{ b []byte }

func (o *body) name(n string) {
	if len(o.b) == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.b = wire.AppendString(o.b, n)
	o.b = append(o.b, ':')
}

func (o *body) str(n, v string) { o.name(n); o.b = wire.AppendString(o.b, v) }
func (o *body) raw(n, v string) { o.name(n); o.b = append(o.b, v...) }
func (o *body) null(n string)   { o.name(n); o.b = append(o.b, "null"...) }
func (o *body) num(n string, v int) {
	o.name(n)
	o.b = strconv.AppendInt(o.b, int64(v), 10)
}
func (o *body) boolean(n string, v bool) { o.name(n); o.b = strconv.AppendBool(o.b, v) }

func (o *body) bytes() []byte {
	if len(o.b) == 0 {
		return []byte("{}")
	}
	return append(o.b, '}')
}

// idempotencyKey returns the Idempotency-Key header of a write that
// creates: the caller's key, or a new random ULID when the caller gave
// none, made once per call so that its retries share it. A key with a
// Scope is sent as the hex SHA-256 of the scope and the key
// (prompts.Idempotency.RecordKey), so that one key in two scopes names two
// writes; the server scopes every key further by the API key's name. A key
// that HTTP would not carry as it is (spaces at its ends, quotes around it)
// is sent quoted, the draft's form.
func idempotencyKey(in prompts.Idempotency) string {
	switch {
	case in.Key == "":
		return prompts.NewID(time.Now())
	case in.Scope != "":
		k := in.RecordKey()
		return "scope-" + hex.EncodeToString(k[:])
	}
	k := in.Key
	if k[0] == ' ' || k[len(k)-1] == ' ' || (len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"') {
		return `"` + k + `"`
	}
	return k
}

// writeHeader is the header of a write: its Idempotency-Key and If-Match,
// when given.
func writeHeader(idemKey string, ifMatch string) http.Header {
	h := http.Header{}
	if idemKey != "" {
		h["Idempotency-Key"] = []string{idemKey}
	}
	if ifMatch != "" {
		h["If-Match"] = []string{ifMatch}
	}
	return h
}

// ifMatch returns the If-Match of a change that expects the prompt at
// revision rev in env: the ETag a read of that environment sends at that
// revision. "" for rev 0 (no expectation).
func ifMatch(promptID string, env prompts.Environment, rev int64) string {
	if rev == 0 {
		return ""
	}
	return string(wire.AppendETag(nil, prompts.ActivePrompt{Prompt: prompts.Prompt{ID: promptID, Revision: rev}, Environment: env}))
}

// revision reads the prompt's revision from the ETag of an answer (the
// tag of a read of the prompt in an environment, which the interface
// makes of the prompt's revision): 0 when there is none.
func revision(h http.Header) int64 {
	_, _, rev, ok := wire.ParseETag(h.Get("Etag"))
	if !ok {
		return 0
	}
	return rev
}

func replayed(h http.Header) bool { return h.Get("Idempotent-Replayed") == "true" }

// decode reads an answer's JSON body into v.
func decode(res *response, v any) error {
	if err := json.Unmarshal(res.body, v); err != nil {
		return prompts.Internal(err)
	}
	return nil
}

// query builds a query string, in the order given, leaving out empty
// values.
type query []string

func (q *query) add(name, value string) {
	if value != "" {
		*q = append(*q, url.QueryEscape(name)+"="+url.QueryEscape(value))
	}
}

func (q *query) page(p prompts.Page) {
	if p.Limit != 0 {
		q.add("limit", strconv.Itoa(p.Limit))
	}
	q.add("after", p.After)
}

func (q query) String() string { return strings.Join(q, "&") }

// hasNext reports whether a Link header holds a link with rel="next"
// (RFC 8288): more items follow.
func hasNext(h http.Header) bool {
	for _, v := range h.Values("Link") {
		for v != "" {
			end := strings.IndexByte(v, '>')
			if end < 0 {
				break
			}
			v = v[end+1:]
			params := v
			if i := nextLinkStart(v); i >= 0 {
				params, v = v[:i], v[i:]
			} else {
				v = ""
			}
			for p := range strings.SplitSeq(params, ";") {
				name, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if !strings.EqualFold(strings.TrimSpace(name), "rel") {
					continue
				}
				for rel := range strings.FieldsSeq(strings.Trim(strings.TrimSpace(val), `"`)) {
					if strings.EqualFold(rel, "next") {
						return true
					}
				}
			}
		}
	}
	return false
}

// nextLinkStart returns where the next link-value of a Link header starts
// (its '<' after a comma outside quotes), or -1.
func nextLinkStart(s string) int {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				if j := strings.IndexByte(s[i:], '<'); j >= 0 {
					return i + j
				}
				return -1
			}
		}
	}
	return -1
}

// list reads one page of a list: its items and whether more follow.
func list[T any](ctx context.Context, c *Client, path string, q query, h http.Header) ([]T, bool, error) {
	res, err := c.do(ctx, request{method: http.MethodGet, path: path, query: q.String(), header: h})
	if err != nil {
		return nil, false, err
	}
	var items []T
	if err := decode(res, &items); err != nil {
		return nil, false, err
	}
	if items == nil {
		items = []T{}
	}
	return items, hasNext(res.header) && len(items) > 0, nil
}

// filtered returns one page of the items that keep accepts, of size at
// most size, after the position after, reading the whole list page by
// page as fetch reads it: for a filter the interface does not take (a set
// of projects). more is whether another accepted item follows.
func filtered[T, K any](size int, after K, fetch func(after K) ([]T, bool, error), keep func(T) bool, pos func(T) K) ([]T, bool, error) {
	out := []T{}
	for {
		page, more, err := fetch(after)
		if err != nil {
			return nil, false, err
		}
		for _, x := range page {
			if !keep(x) {
				continue
			}
			if len(out) == size {
				return out, true, nil
			}
			out = append(out, x)
		}
		if !more || len(page) == 0 {
			return out, false, nil
		}
		after = pos(page[len(page)-1])
	}
}

// inSet returns a function that reports whether an id is one of ids.
func inSet(ids []string) func(string) bool {
	set := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		set[id] = struct{}{}
	}
	return func(id string) bool { _, ok := set[id]; return ok }
}

// each calls f for every i below n, up to limit at a time, and returns
// the first error. It waits for all before it returns.
func each(n, limit int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		sem   = make(chan struct{}, limit)
	)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := f(i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}
