package client_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// memNet is a network in memory, for the tests that run in a
// testing/synctest bubble: its clock moves only while every goroutine of
// the bubble is blocked on the bubble's channels and timers, which a
// goroutine reading a socket is not, and a net.Pipe's is. A dial to an
// address makes a pipe to the listener there; with none there, it is
// refused, as a TCP connection to a port where nothing listens is.
type memNet struct {
	mu        sync.Mutex
	listeners map[string]*memListener
}

// transport returns an HTTP transport that dials on n.
func (n *memNet) transport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = n.dial
	return tr
}

func (n *memNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	l := n.listeners[addr]
	n.mu.Unlock()
	refused := &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	if l == nil {
		return nil, refused
	}
	c, s := net.Pipe()
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
	case <-ctx.Done():
		refused.Err = ctx.Err()
	}
	c.Close()
	s.Close()
	return nil, refused
}

// listen listens at addr.
func (n *memNet) listen(t testing.TB, addr string) *memListener {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.listeners == nil {
		n.listeners = map[string]*memListener{}
	}
	if n.listeners[addr] != nil {
		t.Fatalf("%s: address in use", addr)
	}
	l := &memListener{n: n, addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
	n.listeners[addr] = l
	return l
}

// memListener is a listener of a memNet.
type memListener struct {
	n     *memNet
	addr  string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() {
		l.n.mu.Lock()
		delete(l.n.listeners, l.addr)
		l.n.mu.Unlock()
		close(l.done)
	})
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr(l.addr) }

type memAddr string

func (a memAddr) Network() string { return "mem" }
func (a memAddr) String() string  { return string(a) }

// serveMem serves httpapi over store at addr on n, with the admin key,
// until the test ends (its streams first, so that Close does not wait for
// them).
func serveMem(t testing.TB, n *memNet, addr string, store prompts.Store) {
	t.Helper()
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "admin", Role: httpapi.RoleAdmin, Secret: adminKey}); err != nil {
		t.Fatal(err)
	}
	n.serve(t, addr, httpapi.New(store, httpapi.WithAuthenticator(keys)))
}

// serve serves h at addr on n until the test ends.
func (n *memNet) serve(t testing.TB, addr string, h *httpapi.Handler) {
	t.Helper()
	srv := &http.Server{Handler: h}
	ln := n.listen(t, addr)
	served := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(served) }()
	t.Cleanup(func() { _ = srv.Close(); <-served })
	t.Cleanup(h.CloseStreams)
}
