// Package tcpproxy is a TCP proxy that tests put between a Store and
// PostgreSQL, or a client and a server, to make outages of their own: Cut
// closes every connection and refuses new ones, as a database that went
// away; Freeze stops forwarding bytes with the connections left open, as
// a database gone silent; DropAnswers passes a request and loses its
// answer, as a network that fails after the server did the work. The
// shared PostgreSQL server is never touched.
package tcpproxy

import (
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a target.
type Proxy struct {
	ln     net.Listener
	mu     sync.Mutex
	cut    bool
	frozen bool
	drop   int // so many next connections lose their answers
	thawed *sync.Cond
	conns  map[net.Conn]bool
}

// Start listens on a free loopback port and forwards to target until the
// test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, conns: map[net.Conn]bool{}}
	p.thawed = sync.NewCond(&p.mu)
	t.Cleanup(func() { ln.Close(); p.Freeze(false); p.Cut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.cut {
				p.mu.Unlock()
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns[c], p.conns[up] = true, true
			drop := p.drop > 0
			if drop {
				p.drop--
			}
			p.mu.Unlock()
			go func() { p.pump(up, c); up.Close(); c.Close() }()
			go func() {
				if drop {
					// The answer starts: the request was done. Lose it.
					_, _ = up.Read(make([]byte, 1))
				} else {
					p.pump(c, up)
				}
				up.Close()
				c.Close()
			}()
		}
	}()
	return p
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// pump forwards src to dst, holding what it reads while the proxy is
// frozen.
func (p *Proxy) pump(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.frozen {
				p.thawed.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Freeze stops forwarding bytes, the connections left open (or starts
// again).
func (p *Proxy) Freeze(frozen bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = frozen
	p.thawed.Broadcast()
}

// Cut closes every connection and refuses new ones (or lets them
// through again).
func (p *Proxy) Cut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
		p.conns = map[net.Conn]bool{}
	}
}

// DropAnswers makes the next n connections pass what the client sends and
// close, both ends, as soon as the answer starts: the server did the work
// and the client never hears of it.
func (p *Proxy) DropAnswers(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop = n
}
