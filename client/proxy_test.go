package client_test

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// proxy is a TCP proxy of the test's own in front of a server, which the
// test can make fail as a network does: drop the answer to a request the
// server did, cut every connection, refuse new ones.
type proxy struct {
	ln       net.Listener
	target   string
	accepted atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	down  bool // connections are closed as soon as they are accepted
	drop  int  // so many next connections pass the request and drop the answer
	wg    sync.WaitGroup
}

// newProxy starts a proxy to the server at rawURL; it stops with the
// test.
func newProxy(t testing.TB, rawURL string) *proxy {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

// URL is the proxy's base URL.
func (p *proxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		p.mu.Lock()
		down, drop := p.down, p.drop > 0
		if drop {
			p.drop--
		}
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		p.wg.Add(1)
		go p.handle(c, drop)
	}
}

// handle pipes one connection to the server and back; with drop, it
// passes the request and closes the connection as soon as the answer
// starts, so that the server did the work and the client never hears of
// it.
func (p *proxy) handle(c net.Conn, drop bool) {
	defer p.wg.Done()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.track(c, s)
	defer p.untrack(c, s)
	go func() { _, _ = io.Copy(s, c); s.Close() }()
	if drop {
		_, _ = s.Read(make([]byte, 1)) // the answer starts: the request was done
		return
	}
	_, _ = io.Copy(c, s)
}

func (p *proxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}

// cut closes every open connection, as a network that fails does.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// setDown makes the proxy close every connection it accepts (true), or
// pass them again (false).
func (p *proxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
}

// dropAnswers makes the next n connections drop the answers of the
// requests they carry.
func (p *proxy) dropAnswers(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop = n
}
