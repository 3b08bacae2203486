package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/httpapi"
)

// active counts the connections with a request under way.
func (l *connLimit) active() int {
	n := 0
	l.conns.Range(func(_, v any) bool {
		if http.ConnState(v.(*connEntry).state.Load()) == http.StateActive {
			n++
		}
		return true
	})
	return n
}

// limitedServer serves, within limit, GET / at once and GET /slow once
// gate closes, authenticating the X-API-Key a request brings (if any)
// with keys; its connections are the sockets themselves.
func limitedServer(t *testing.T, limit *connLimit, gate <-chan struct{}, keys httpapi.Authenticator) string {
	t.Helper()
	is := is.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	auth := namedKeys{keys: keys}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if k := r.Header.Get("X-API-Key"); k != "" {
				if _, err := auth.Authenticate(r.Context(), k); err != nil {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
			}
			if r.URL.Path == "/slow" {
				<-gate
			}
			io.WriteString(w, "ok")
		}),
		ConnState: limit.connState,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			_, raw := c.(*net.TCPConn)
			is.True(raw) // the handler's connection is the socket itself
			return limit.connContext(ctx, c)
		},
	}
	go srv.Serve(limit.listener(ln)) //nolint:errcheck // ends at Close
	ctx, cancel := context.WithCancel(context.Background())
	go limit.sweep(ctx)
	t.Cleanup(func() { cancel(); srv.Close() })
	return ln.Addr().String()
}

// send dials addr and sends a request for path, with key unless it is "".
func send(t *testing.T, addr, path, key string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	again(t, c, path, key)
	return c
}

// again sends another request on c.
func again(t *testing.T, c net.Conn, path, key string) {
	t.Helper()
	req := "GET " + path + " HTTP/1.1\r\nHost: x\r\n"
	if key != "" {
		req += "X-API-Key: " + key + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
}

// answered reads the answer to the request sent on c: ok within 5 s.
func answered(t *testing.T, c net.Conn) {
	t.Helper()
	is := is.New(t)
	is.NoErr(c.SetReadDeadline(time.Now().Add(5 * time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	is.NoErr(err)
	body, err := io.ReadAll(resp.Body)
	is.NoErr(err)
	is.Equal(string(body), "ok")
	is.NoErr(c.SetReadDeadline(time.Time{}))
}

// closedByServer reports whether the server closed c (within wait),
// reading what is left of an answer.
func closedByServer(t *testing.T, c net.Conn, wait time.Duration) bool {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(wait)); err != nil {
		t.Fatal(err)
	}
	_, err := io.Copy(io.Discard, c)
	if err == nil {
		return true // EOF
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return err != nil
}

// notServed reports that nothing came on c for a while: it waits.
func notServed(t *testing.T, c net.Conn) bool {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	ok := errors.As(err, &ne) && ne.Timeout()
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	return ok
}

// Past its limit, the server closes the connection idle the longest to
// make room; while every connection is a request with a key under way, a
// new one waits until one is done.
func TestConnLimit(t *testing.T) {
	is := is.New(t)
	gate := make(chan struct{})
	keys := httpapi.NewKeys()
	is.NoErr(keys.Add(httpapi.Key{Name: "k", Role: httpapi.RoleRead, Secret: "busy-secret-0123456789"}))
	addr := limitedServer(t, newConnLimit(2, 100), gate, keys)
	idle := send(t, addr, "/", "")
	answered(t, idle) // now idle, holding a slot
	busy := send(t, addr, "/slow", "busy-secret-0123456789")
	third := send(t, addr, "/slow", "busy-secret-0123456789") // no slot: the idle connection makes room
	is.True(closedByServer(t, idle, 5*time.Second))           // the oldest idle one is closed
	fourth := send(t, addr, "/", "")
	is.True(notServed(t, fourth)) // both connections busy: it waits
	close(gate)
	answered(t, busy)
	answered(t, third)
	answered(t, fourth) // served once one was idle
}

// With every slot held by requests without a valid key that take their
// time (a body that never comes needs no key), a new client is served:
// the oldest of them is closed once it has taken keylessGrace.
func TestConnLimitClosesSlowRequestsWithoutAKey(t *testing.T) {
	is := is.New(t)
	limit := newConnLimit(2, 100)
	addr := limitedServer(t, limit, nil, httpapi.NewKeys())
	withoutBody := func(active int) net.Conn { // a body announced that never comes
		c, err := net.Dial("tcp", addr)
		is.NoErr(err)
		t.Cleanup(func() { c.Close() })
		_, err = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
		is.NoErr(err)
		// The server orders requests by when it reads them: wait until
		// it has, so that the first is the oldest on a busy host too.
		waitUntil(t, "the server reads the request", func() bool { return limit.active() == active })
		return c
	}
	first := withoutBody(1)
	second := withoutBody(2)
	third := send(t, addr, "/", "")
	answered(t, third)                               // within 5 s: keylessGrace, not the request's timeout
	is.True(closedByServer(t, first, 5*time.Second)) // the oldest made room
	is.True(!closedByServer(t, second, 0))           // the other goes on
}

// One address holds at most perAddr connections: one more is closed at
// once.
func TestConnLimitPerAddress(t *testing.T) {
	is := is.New(t)
	addr := limitedServer(t, newConnLimit(10, 2), nil, httpapi.NewKeys())
	a, b := send(t, addr, "/", ""), send(t, addr, "/", "")
	c := send(t, addr, "/", "")
	is.True(closedByServer(t, c, 5*time.Second)) // the third from 127.0.0.1
	answered(t, a)
	answered(t, b)
	a.Close()
	waitUntil(t, "a slot of the address is free", func() bool {
		d := send(t, addr, "/", "")
		return !closedByServer(t, d, time.Second)
	})
}

// A connection that has sent no valid key closes after noKey idle; one
// that has stays open.
func TestIdleWithoutKeyCloses(t *testing.T) {
	is := is.New(t)
	keys := httpapi.NewKeys()
	is.NoErr(keys.Add(httpapi.Key{Name: "k", Role: httpapi.RoleRead, Secret: "idle-secret-0123456789"}))
	limit := newConnLimit(10, 10)
	limit.noKey = 100 * time.Millisecond
	addr := limitedServer(t, limit, nil, keys)
	withKey, without, wrongKey := send(t, addr, "/", "idle-secret-0123456789"), send(t, addr, "/", ""), send(t, addr, "/", "not-a-key-0123456789")
	answered(t, withKey)
	answered(t, without)
	is.NoErr(wrongKey.SetReadDeadline(time.Now().Add(5 * time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(wrongKey), nil)
	is.NoErr(err)
	is.Equal(resp.StatusCode, http.StatusUnauthorized)
	is.True(closedByServer(t, without, 5*time.Second))
	is.True(closedByServer(t, wrongKey, 5*time.Second))
	is.True(!closedByServer(t, withKey, 500*time.Millisecond)) // five times noKey, and more than a sweep
	again(t, withKey, "/", "")
	answered(t, withKey)
}
