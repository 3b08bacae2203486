package sqlstore

import (
	"context"
	"net"
	"time"
)

// Dialer dials the connections of a Store's *sql.DB (give it to
// pq.Connector.Dialer) so that a database that falls silent cannot hold a
// query forever. A database can stop answering without closing its
// connections (its processes stopped, its host or a network path gone
// quiet); lib/pq then waits for an answer that never comes, whatever the
// query's context says: it sends a cancel request and goes on waiting.
// The Store's methods return at their context's end all the same, but the
// query they leave behind holds its connection, and a goroutine, while
// the silence lasts. Dialer gives every read and write on the connection
// a deadline of Timeout: a query that has no answer by then fails, and
// database/sql discards the connection. It also arms TCP keepalive and, on Linux,
// TCP_USER_TIMEOUT, so that the kernel too gives up on a peer that stopped
// acknowledging.
//
// Timeout bounds a single wait for the database, so it must exceed the
// longest statement the Store runs under load (a lock held by another
// writer included); twice the callers' deadline is a good choice. Run
// Migrate, whose statements may take longer on a large database, on a
// *sql.DB of its own without this Dialer. And never use it for a Feed:
// its LISTEN connection is silent by nature (the Feed pings it itself).
//
//	connector, err := pq.NewConnector(dsn)
//	connector.Dialer(sqlstore.Dialer{Timeout: 30 * time.Second})
//	db := sqlx.NewDb(sql.OpenDB(connector), "postgres")
type Dialer struct {
	// Timeout is the longest wait of one read or write; 0 means 30 s.
	Timeout time.Duration
	// KeepAlive is the TCP keepalive period; 0 means 15 s.
	KeepAlive time.Duration
}

// Dial implements pq.Dialer.
func (d Dialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

// DialTimeout implements pq.Dialer.
func (d Dialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

// DialContext implements pq.DialerContext.
func (d Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	timeout, keepAlive := d.Timeout, d.KeepAlive
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if keepAlive <= 0 {
		keepAlive = 15 * time.Second
	}
	nd := net.Dialer{KeepAlive: keepAlive, Control: userTimeout(timeout)}
	c, err := nd.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &deadlineConn{Conn: c, timeout: timeout}, nil
}

// deadlineConn is a connection whose every read and write has a deadline.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *deadlineConn) Read(b []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
