package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/promptkit/prompts/httpapi"
)

// namedKeys is the server's Authenticator: keys, whose answer for a
// configured key it accepted never changes (a *httpapi.Keys: Add refuses
// a secret given twice, and nothing removes a key; a key kept in the
// store, Access.KeyID, is never remembered here), that tells the access log the name of
// the key it accepted, and that remembers, for each connection, the last
// key it accepted on it (see connAuth): a client sends the same key with
// every request of a connection, and hashing it again for each would be a
// tenth of what the server adds to a read. With failures, it counts the
// unknown keys of each client address (see keyFailures).
type namedKeys struct {
	keys       httpapi.Authenticator
	failures   *keyFailures // nil: not counted
	trustProxy bool         // the client's address is X-Forwarded-For's
}

func (k namedKeys) Authenticate(ctx context.Context, key string) (httpapi.Access, error) {
	return k.authenticate(ctx, key, true)
}

// authenticate authenticates key, counting it against its client's
// address when it is unknown and count is true.
func (k namedKeys) authenticate(ctx context.Context, key string, count bool) (httpapi.Access, error) {
	conn, _ := ctx.Value(connAuthKey{}).(*connAuth)
	var a httpapi.Access
	if last := conn.lastKey(); last != nil && sameSecret(last.key, key) {
		a = last.access
		if a.ProjectIDs != nil {
			a.ProjectIDs = slices.Clone(a.ProjectIDs) // as the Keys hands it out: the caller's own
		}
	} else {
		var err error
		if a, err = k.keys.Authenticate(ctx, key); err != nil {
			if info := infoFrom(ctx); count && k.failures != nil && info != nil && info.req != nil && errors.Is(err, httpapi.ErrUnknownKey) {
				k.failures.failed(clientAddr(info.req, k.trustProxy))
			}
			return a, err // a key refused is never remembered
		}
		if conn != nil && a.KeyID == "" { // a kept key may be revoked: looked up again, by its authenticator's rules
			kept := a
			kept.ProjectIDs = slices.Clone(a.ProjectIDs) // the caller's a is its own
			conn.last.Store(&accepted{key: key, access: kept})
		}
	}
	if info := infoFrom(ctx); info != nil {
		info.key = a.Name
	}
	return a, nil
}

// Forget passes a revocation on to the keys that remember the store's
// keys (httpapi.StoreKeys), so that the handler's revocation takes effect
// at once.
func (k namedKeys) Forget(id string) {
	if f, ok := k.keys.(interface{ Forget(string) }); ok {
		f.Forget(id)
	}
}

// ConfiguredKeys lists the configured keys, for GET /keys.
func (k namedKeys) ConfiguredKeys() []httpapi.Access {
	if l, ok := k.keys.(interface{ ConfiguredKeys() []httpapi.Access }); ok {
		return l.ConfiguredKeys()
	}
	return nil
}

// connAuth is what a connection remembers of the last key accepted on it:
// the key and its access. It is the connection's, and goes with it; the
// key is already in the connection's memory (net/http's buffers), and
// nothing else can read it.
type connAuth struct {
	last atomic.Pointer[accepted]
	// stream is set while the connection serves an event stream, which
	// the connection limit may close to make room (its client resumes).
	stream atomic.Bool
}

type accepted struct {
	key    string
	access httpapi.Access
}

type connAuthKey struct{}

// lastKey is the last key accepted on the connection, or nil; c may be
// nil (a request that came by no connection of the server's).
// streaming reports whether the connection serves an event stream now.
func (c *connAuth) streaming() bool { return c != nil && c.stream.Load() }

func (c *connAuth) lastKey() *accepted {
	if c == nil {
		return nil
	}
	return c.last.Load()
}

// withConnAuth is a ConnContext with which every connection remembers its
// last key (the server's connLimit.connContext does that, and more).
func withConnAuth(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connAuthKey{}, new(connAuth))
}

// sameSecret reports whether a and b are equal, in a time that depends
// on their lengths only: a proxy may send the requests of many clients on
// one connection, and none may learn another's key by timing.
func sameSecret(a, b string) bool {
	return subtle.ConstantTimeCompare(unsafe.Slice(unsafe.StringData(a), len(a)), unsafe.Slice(unsafe.StringData(b), len(b))) == 1
}
