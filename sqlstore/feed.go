package sqlstore

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/promptkit/prompts"
)

// Feed is a prompts.Feed: it tells a cache (package cache) what every
// process writing to one schema changes, over PostgreSQL's LISTEN/NOTIFY: each write that changes
// a prompt notifies on the schema's Channel in its own transaction, so the
// notification is delivered when, and only if, the write commits.
//
// A Feed holds a connection of its own, outside the caller's pool (a
// listening connection is silent by nature and must not be timed out).
// Run it on a goroutine of yours; it reports to its sink until ctx ends:
//
//	feed := sqlstore.NewFeed(dsn, sqlstore.WithSchema("prompts"), sqlstore.WithLogger(logger))
//	c := cache.New(store)
//	go feed.Run(ctx, c) // c caches once the feed listens
//
// When the connection drops, the feed reports Lost (nothing sent while it
// is down is ever replayed) and reconnects with backoff; once it listens
// again it reports Recovered, and the cache drops what it held. It pings
// the connection every few seconds, with a deadline, so that a silent
// network is found out too.
type Feed struct {
	dsn     string
	schema  string
	log     *slog.Logger
	ping    time.Duration
	minWait time.Duration
	maxWait time.Duration
}

// A FeedOption configures a Feed (NewFeed): WithSchema, WithLogger and
// WithPing.
type FeedOption interface{ applyFeed(*Feed) }

type feedOption func(*Feed)

func (o feedOption) applyFeed(f *Feed) { o(f) }

// WithPing sets how often a Feed checks its connection (default 5 s); a
// check that gets no answer within the same time reports the feed lost.
// Values below 1 keep the default.
func WithPing(d time.Duration) FeedOption {
	return feedOption(func(f *Feed) {
		if d > 0 {
			f.ping = d
		}
	})
}

// NewFeed returns a feed over the database at dsn (a URL or key=value
// connection string, as lib/pq takes), following the writes of the Store
// in the schema WithSchema names (DefaultSchema otherwise). It does no
// I/O until Run, which reports a bad dsn or schema.
func NewFeed(dsn string, opts ...FeedOption) *Feed {
	f := &Feed{dsn: dsn, schema: DefaultSchema, ping: 5 * time.Second, minWait: 50 * time.Millisecond, maxWait: time.Second}
	for _, o := range opts {
		if o != nil {
			o.applyFeed(f)
		}
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	return f
}

var _ prompts.Feed = (*Feed)(nil)

// Run listens and reports to sink until ctx ends; it returns ctx's error,
// or the error that made listening impossible (a bad dsn or schema). It
// starts its own goroutines (the listener's, and one that pings) and
// stops them before it returns.
func (f *Feed) Run(ctx context.Context, sink prompts.Sink) error {
	if err := checkSchema(f.schema); err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		lost = true // until the first connection
	)
	report := func(isLost bool) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case isLost && !lost:
			lost = true
			f.log.Warn("sqlstore: feed lost; reads go to the database until it is back", "schema", f.schema)
			sink.Lost()
		case !isLost && lost:
			lost = false
			f.log.Info("sqlstore: feed listening", "schema", f.schema)
			sink.Recovered()
		}
	}
	l := pq.NewListener(f.dsn, f.minWait, f.maxWait, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventDisconnected, pq.ListenerEventConnectionAttemptFailed:
			if err != nil {
				f.log.Debug("sqlstore: feed connection", "err", err)
			}
			report(true)
		}
	})
	// Listen waits for the first connection: on a goroutine, so that ctx
	// can end the wait (Close makes it return).
	listened := make(chan error, 1)
	go func() { listened <- l.Listen(Channel(f.schema)) }()
	defer func() {
		// Close takes the listener's lock, which a ping stuck on a silent
		// network holds: wait for it a while, not for ever.
		closed := make(chan struct{})
		go func() { l.Close(); <-listened; close(closed) }()
		select {
		case <-closed:
		case <-time.After(2 * f.ping):
			f.log.Warn("sqlstore: feed: the listener did not close; left behind")
		}
	}()
	pingDone := make(chan struct{})
	pingCtx, stopPing := context.WithCancel(ctx)
	defer func() { stopPing(); <-pingDone }()
	go func() { // ping with a deadline: a silent connection is a lost one
		defer close(pingDone)
		t := time.NewTicker(f.ping)
		defer t.Stop()
		var (
			res      chan error // the ping in flight, if any: one at a time
			pingLost bool       // a ping reported the loss, so a ping may undo it
		)
		for {
			select {
			case <-pingCtx.Done():
				return
			case <-t.C:
			}
			if res == nil {
				res = make(chan error, 1)
				go func(res chan error) { res <- l.Ping() }(res)
			}
			select {
			case err := <-res:
				res = nil
				switch {
				case err != nil:
					pingLost = true
					report(true)
				case pingLost:
					pingLost = false
					report(false)
				}
			case <-time.After(f.ping): // silent: lost, and that ping stays the one in flight
				pingLost = true
				report(true)
			case <-pingCtx.Done():
				return
			}
		}
	}()
	waiting := listened // nil once listening
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-waiting:
			listened <- err // for the deferred wait
			if err != nil {
				return err
			}
			report(false) // listening
			waiting = nil
		case n, ok := <-l.Notify:
			if !ok {
				return errors.New("sqlstore: feed: the listener closed")
			}
			if n == nil {
				// Connected (again): what was sent meanwhile is lost
				// for good, and Recovered makes the cache drop it all.
				mu.Lock()
				lost = true
				mu.Unlock()
				report(false)
				continue
			}
			// "<prompt id> <project id>", or for an environment removed
			// " <project id> <environment>".
			promptID, rest, _ := strings.Cut(n.Extra, " ")
			projectID, env, _ := strings.Cut(rest, " ")
			sink.Invalidate(prompts.Invalidation{PromptID: promptID, ProjectID: projectID, Environment: prompts.Environment(env)})
		}
	}
}
