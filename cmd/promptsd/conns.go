package main

import (
	"net"
	"net/http"
)

// connLimit keeps at most n connections open at once: its listener
// accepts a connection only while a slot is free (past n, new connections
// wait in the kernel's backlog), and the server's ConnState hook gives
// the slot back when the connection closes or is hijacked, the two states
// a connection ends in. The connections themselves are not wrapped: every
// read and write of a request goes to the socket as it is.
type connLimit struct {
	slots chan struct{}
}

func newConnLimit(n int) *connLimit {
	return &connLimit{slots: make(chan struct{}, n)}
}

// listener returns ln, accepting while a slot is free. Every connection it
// returns must be served by a server whose ConnState calls connState.
func (l *connLimit) listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, slots: l.slots}
}

// connState is the server's ConnState hook.
func (l *connLimit) connState(_ net.Conn, s http.ConnState) {
	if s == http.StateClosed || s == http.StateHijacked {
		<-l.slots
	}
}

type limitedListener struct {
	net.Listener
	slots chan struct{}
}

func (l *limitedListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return c, nil
}
