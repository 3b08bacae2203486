package httpapi

import (
	"net/http"
	"strings"

	"github.com/promptkit/prompts"
)

// Reads that ask for a fresh answer. A request with Cache-Control:
// no-cache or max-age=0 (RFC 9111, section 5.2.1), or, when it has no
// Cache-Control, Pragma: no-cache (section 5.4), asks that no stored
// answer be used. A read of a prompt in an environment asks the store
// with Fresh (prompts.ActiveQuery), which a cache answers from the store
// under it; a read of a version or a project goes to the store under
// every wrapper of the handler's store (its Unwrap chain, see package
// prompts), as a snapshot always does: what a client just wrote through
// one replica, it then reads through any other. Such an answer is never
// stale: when that store is unavailable, the read is 503.

// unwrapper is a store that wraps another (package cache's Store).
type unwrapper interface {
	Unwrap() prompts.Store
}

// underCaches returns the store at the bottom of s's Unwrap chain, or nil
// when s wraps none.
func underCaches(s prompts.Store) prompts.Store {
	var under prompts.Store
	for range 64 { // a store whose Unwrap leads back to itself ends it too
		w, ok := s.(unwrapper)
		if !ok {
			break
		}
		next := w.Unwrap()
		if next == nil || next == s {
			break
		}
		s, under = next, next
	}
	return under
}

// reader returns the store a read asks: the store under the cache for a
// request that asks for a fresh answer.
func (h *Handler) reader(r *http.Request) prompts.Store {
	if h.fresh != nil && wantsFresh(r.Header) {
		return h.fresh
	}
	return h.store
}

// wantsFresh reports whether a request's header asks that no stored
// answer be used: Cache-Control with no-cache or max-age=0, or, without
// Cache-Control, Pragma: no-cache.
func wantsFresh(hd http.Header) bool {
	if cc, ok := hd["Cache-Control"]; ok {
		return hasDirective(cc, func(name, arg string, hasArg bool) bool {
			return strings.EqualFold(name, "no-cache") ||
				(strings.EqualFold(name, "max-age") && hasArg && isZeroSeconds(arg))
		})
	}
	return hasDirective(hd["Pragma"], func(name, _ string, _ bool) bool {
		return strings.EqualFold(name, "no-cache")
	})
}

// isZeroSeconds reports whether s is delta-seconds (RFC 9111, section
// 1.2.2) of value 0: one or more zeros.
func isZeroSeconds(s string) bool {
	return s != "" && strings.Trim(s, "0") == ""
}

// hasDirective reports whether match holds for a directive of a header's
// values, each a comma-separated list of directives: a token, optionally
// followed by = and a token or a quoted string (RFC 9111, section 5.2).
// Names are given as sent (directive names are case-insensitive), an
// argument unquoted. A malformed directive is skipped up to the next
// comma outside a quoted string.
func hasDirective(values []string, match func(name, arg string, hasArg bool) bool) bool {
	for _, v := range values {
		i := 0
		for i < len(v) {
			for i < len(v) && (v[i] == ',' || v[i] == ' ' || v[i] == '\t') {
				i++
			}
			start := i
			for i < len(v) && isTokenChar(v[i]) {
				i++
			}
			name := v[start:i]
			i = skipSpace(v, i)
			var arg string
			hasArg := false
			if i < len(v) && v[i] == '=' {
				i = skipSpace(v, i+1)
				if i < len(v) && v[i] == '"' {
					var ok bool
					arg, i, ok = quotedString(v, i)
					hasArg = ok
				} else {
					start := i
					for i < len(v) && isTokenChar(v[i]) {
						i++
					}
					arg, hasArg = v[start:i], i > start
				}
				i = skipSpace(v, i)
			}
			wellFormed := name != "" && (i == len(v) || v[i] == ',')
			if wellFormed && match(name, arg, hasArg) {
				return true
			}
			// Skip what is left of this directive, quoted strings whole.
			for i < len(v) && v[i] != ',' {
				if v[i] == '"' {
					_, i, _ = quotedString(v, i)
					continue
				}
				i++
			}
		}
	}
	return false
}

// quotedString reads the quoted string that starts at v[i] (a quote),
// with its backslash escapes, and returns its content, the index after
// it, and whether it was closed.
func quotedString(v string, i int) (string, int, bool) {
	var b strings.Builder
	for i++; i < len(v); i++ {
		switch c := v[i]; c {
		case '"':
			return b.String(), i + 1, true
		case '\\':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), i, false
}

func skipSpace(v string, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	return i
}

// isTokenChar reports whether c may be part of a token (RFC 9110,
// section 5.6.2).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
