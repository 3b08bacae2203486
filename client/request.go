package client

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
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

// encode returns the JSON of a request's body, one of package api's
// request types. Only metadata that is no JSON (which Validate refuses
// first) fails.
func encode(v any) ([]byte, error) {
	b, err := api.Marshal(v)
	if err != nil {
		return nil, prompts.Internal(err)
	}
	return b, nil
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

// decode reads an answer's JSON body, a value of the api type A, and
// returns what conv makes of it. Members it does not know are ignored:
// a later server may send more.
func decode[A, D any](res *response, conv func(A) D) (D, error) {
	var a A
	if err := api.UnmarshalLenient(res.body, &a); err != nil {
		var zero D
		return zero, prompts.Internal(err)
	}
	return conv(a), nil
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
// Each item is a value of the api type A, returned as conv makes it.
func list[A, D any](ctx context.Context, c *Client, path string, q query, h http.Header, conv func(A) D) ([]D, bool, error) {
	res, err := c.do(ctx, request{method: http.MethodGet, path: path, query: q.String(), header: h})
	if err != nil {
		return nil, false, err
	}
	items, err := decode(res, func(page []A) []D {
		out := make([]D, len(page))
		for i, a := range page {
			out[i] = conv(a)
		}
		return out
	})
	if err != nil {
		return nil, false, err
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
