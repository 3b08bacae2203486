package main

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connLimit bounds the server's connections:
//
//   - at most max open at once. Past it, the listener closes a connection
//     to make room for the new one, the oldest first of the first kind
//     there is: idle connections (and those that have sent nothing for
//     2 s); then requests without a valid key that have taken more than
//     1 s (a body that never comes holds a slot for the whole request
//     timeout otherwise, and needs no key); then event streams, which
//     their clients resume where they were. While every connection is a
//     request with a key under way, the new one waits (and those behind
//     it, in the kernel's backlog) until one is done or idle.
//   - at most perAddr from one remote address: one more is closed at once.
//   - a connection on which no valid key was sent closes after noKey idle,
//     where one with a key stays for the server's IdleTimeout: thousands
//     of keep-alive connections that each asked /livez once cannot hold
//     the slots that clients with keys need.
//
// The server's ConnState hook follows each connection's state and gives
// the slot back when it closes or is hijacked, the two states a
// connection ends in; its ConnContext ties the connection to the key it
// remembers (connAuth). The connections themselves are not wrapped: every
// read and write of a request goes to the socket as it is.
type connLimit struct {
	slots   chan struct{}
	perAddr int
	noKey   time.Duration
	epoch   time.Time // the monotonic origin of the entries' since

	conns sync.Map // net.Conn -> *connEntry, every connection accepted and not yet closed

	mu     sync.Mutex
	byAddr map[string]int // open connections by remote address

	waiting atomic.Bool   // the listener waits for a slot
	idle    chan struct{} // a connection became idle while it waits
}

// connEntry is what the limit knows of one connection.
type connEntry struct {
	conn    net.Conn
	addr    string
	state   atomic.Int32 // its http.ConnState
	since   atomic.Int64 // when it entered that state, in nanoseconds since the limit's epoch
	auth    atomic.Pointer[connAuth]
	evicted atomic.Bool // closed by the limit: chosen once
}

// noKeyIdle is how long a connection that never sent a valid key stays
// open idle.
const noKeyIdle = 5 * time.Second

// newGrace is how long a new connection may take to send its first
// request before it may be closed to make room.
const newGrace = 2 * time.Second

// keylessGrace is how long a request without a valid key may take before
// its connection may be closed to make room: a probe, a metrics scrape or
// a page of the web interface takes milliseconds.
const keylessGrace = time.Second

func newConnLimit(max, perAddr int) *connLimit {
	return &connLimit{
		slots:   make(chan struct{}, max),
		perAddr: perAddr,
		noKey:   noKeyIdle,
		epoch:   time.Now(),
		byAddr:  make(map[string]int),
		idle:    make(chan struct{}, 1),
	}
}

func (l *connLimit) now() int64 { return int64(time.Since(l.epoch)) }

// listener returns ln within the limits. Every connection it returns must
// be served by a server whose ConnState calls connState and whose
// ConnContext is connContext.
func (l *connLimit) listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, limit: l, done: make(chan struct{})}
}

// connContext is the server's ConnContext: every connection remembers its
// last key (see connAuth), which the limit reads to know whether it sent
// one.
func (l *connLimit) connContext(ctx context.Context, c net.Conn) context.Context {
	a := new(connAuth)
	if v, ok := l.conns.Load(c); ok {
		v.(*connEntry).auth.Store(a)
	}
	return context.WithValue(ctx, connAuthKey{}, a)
}

// connState is the server's ConnState hook.
func (l *connLimit) connState(c net.Conn, s http.ConnState) {
	v, ok := l.conns.Load(c)
	if !ok {
		return
	}
	e := v.(*connEntry)
	switch s {
	case http.StateClosed, http.StateHijacked:
		l.conns.Delete(c)
		l.leave(e.addr)
		<-l.slots
	default:
		e.since.Store(l.now())
		e.state.Store(int32(s))
		if s == http.StateIdle && l.waiting.Load() {
			select {
			case l.idle <- struct{}{}:
			default:
			}
		}
	}
}

// admit counts a new connection from addr, unless addr holds perAddr
// already.
func (l *connLimit) admit(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byAddr[addr] >= l.perAddr {
		return false
	}
	l.byAddr[addr]++
	return true
}

// leave uncounts a connection from addr.
func (l *connLimit) leave(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
}

// acquire takes a slot, closing idle connections, the oldest first, while
// there is none; it waits while every connection is busy. It is false
// when done closes first.
func (l *connLimit) acquire(done <-chan struct{}) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	l.waiting.Store(true)
	defer l.waiting.Store(false)
	again := time.NewTicker(newGrace / 4) // new connections age past newGrace
	defer again.Stop()
	for {
		l.makeRoom() // the slot comes back when the server sees the connection closed
		select {
		case l.slots <- struct{}{}:
			return true
		case <-l.idle:
		case <-again.C:
		case <-done:
			return false
		}
	}
}

// Kinds of connections that may be closed to make room, in the order in
// which they are taken.
const (
	roomIdle    = iota // idle, or new for newGrace without a request
	roomKeyless        // a request without a valid key, under way for keylessGrace
	roomStream         // an event stream
	roomNone
)

// roomKind returns which kind of connection e is, for makeRoom.
func (l *connLimit) roomKind(e *connEntry, now int64) int {
	age := now - e.since.Load()
	switch http.ConnState(e.state.Load()) {
	case http.StateIdle:
		return roomIdle
	case http.StateNew:
		if age > int64(newGrace) {
			return roomIdle // a client that connects and sends nothing, before its ReadHeaderTimeout
		}
	case http.StateActive:
		a := e.auth.Load()
		switch {
		case a.streaming():
			return roomStream
		case a.lastKey() == nil && age > int64(keylessGrace):
			return roomKeyless
		}
	}
	return roomNone
}

// makeRoom closes one connection, the oldest of the first kind there is
// (roomIdle, then roomKeyless, then roomStream), and reports whether it
// closed one. A connection just accepted is not taken: its first request
// may be on its way.
func (l *connLimit) makeRoom() bool {
	var oldest *connEntry
	kind := roomNone
	now := l.now()
	l.conns.Range(func(_, v any) bool {
		e := v.(*connEntry)
		if e.evicted.Load() {
			return true
		}
		k := l.roomKind(e, now)
		if k < kind || k == kind && k != roomNone && e.since.Load() < oldest.since.Load() {
			oldest, kind = e, k
		}
		return true
	})
	if oldest == nil || !oldest.evicted.CompareAndSwap(false, true) {
		return false
	}
	oldest.conn.Close() // the server's read or write fails, and it closes the connection
	return true
}

// sweep closes, every second (or noKey, when shorter) until ctx ends,
// the connections idle for longer than noKey that never sent a valid key.
func (l *connLimit) sweep(ctx context.Context) {
	t := time.NewTicker(min(time.Second, l.noKey))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := l.now()
		l.conns.Range(func(_, v any) bool {
			e := v.(*connEntry)
			if http.ConnState(e.state.Load()) == http.StateIdle && e.auth.Load().lastKey() == nil &&
				now-e.since.Load() > int64(l.noKey) && e.evicted.CompareAndSwap(false, true) {
				e.conn.Close()
			}
			return true
		})
	}
}

type limitedListener struct {
	net.Listener
	limit *connLimit
	once  sync.Once
	done  chan struct{} // closed with the listener
}

func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := hostOf(c.RemoteAddr())
		if !l.limit.admit(addr) {
			c.Close() // over -max-conns-per-addr
			continue
		}
		if !l.limit.acquire(l.done) {
			c.Close()
			l.limit.leave(addr)
			return nil, net.ErrClosed
		}
		e := &connEntry{conn: c, addr: addr}
		e.since.Store(l.limit.now())
		e.state.Store(int32(http.StateNew))
		l.limit.conns.Store(c, e)
		return c, nil
	}
}

func (l *limitedListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// hostOf is the host of a connection's remote address, without its port.
func hostOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return string(t.IP.To16())
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
