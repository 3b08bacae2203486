package client

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// Feed is a prompts.Feed over the server's event stream (GET /events with
// Accept: text/event-stream): it tells a cache (package cache) of every
// change the server's store records, made through any process. Make one
// with Client.Feed and run it on a goroutine of yours:
//
//	c := cache.New(cl)
//	go cl.Feed().Run(ctx, c)
//
// Run reports Recovered once the stream is open (the cache starts to
// cache), then Invalidate for every event (the prompt and project it
// names). For DefaultFreshWindow after an event, the client's reads of
// what it changed ask for a fresh answer (Cache-Control: no-cache), as
// after a write of its own: the replica of the server that answers the
// cache's next read may have a cache whose feed has not yet delivered the
// change, and the cache would keep its older answer until the next
// change. When the stream breaks (the connection is lost, the server
// ends it at shutdown, or it is silent for longer than two of the
// server's keep-alives), Run reports Lost, so that reads go to the
// server, and connects again, at once after a stream that lasted, else
// after a jittered wait that grows with each failure as RetryPolicy's
// backoff does, but to a second at most (at least what a Retry-After
// says), so that a cache reads fresh values within about a second of the
// server's return however long it was gone, with Last-Event-ID: the last
// event it saw. The stream then starts with the events it missed, so
// nothing is lost: Run
// reports Resumed (prompts.Resumer) and the cache keeps what it holds,
// the events dropping what changed; to a sink that is no Resumer it
// reports Recovered. Only when the events it missed are gone (410: they
// are kept for days), or when the stream broke before it delivered any
// event (a stream opened without Last-Event-ID starts with the next
// event, and does not say which: the feed cannot ask for what it missed),
// does it report Recovered after the loss, and the cache drops
// everything.
//
// Run returns ctx's error when ctx ends, or the error of a refusal that
// a retry cannot mend (401, 403, a server that keeps no event log); it
// reports Lost first if it had reported the stream open. A key sees the
// events of its projects only: a cache fed so should hold only those.
type Feed struct {
	c    *Client
	idle time.Duration // a stream silent this long is lost
}

// Feed returns a feed over the client's event stream. It does no I/O
// until Run.
func (c *Client) Feed() *Feed { return &Feed{c: c, idle: 45 * time.Second} }

var _ prompts.Feed = (*Feed)(nil)

// Run follows the stream and reports to sink until ctx ends (see Feed).
func (f *Feed) Run(ctx context.Context, sink prompts.Sink) error {
	var (
		resumer, canResume = sink.(prompts.Resumer)
		st                 followState
		open               bool // Recovered or Resumed reported, and no Lost since
		fresh              = true
		failures           int
		log                = f.c.log
	)
	// The client's own writes tell the sink at once (Client.wrote).
	defer f.c.sinks.add(sink)()
	defer func() {
		if open {
			sink.Lost()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		sctx, cancel := context.WithCancel(ctx)
		body, err := f.c.openStream(sctx, st.last)
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var wait time.Duration
			switch prompts.ErrorCode(err) {
			case prompts.CodeEventsExpired:
				// The events missed are gone: start afresh from the next,
				// and the sink drops everything.
				log.WarnContext(ctx, "client: feed: the events missed are no longer kept; the cache starts afresh", "last_event_id", st.last)
				st.last, fresh = 0, true
				continue
			case prompts.CodeUnavailable:
				failures++
				wait = max(feedBackoff(f.c.retry, failures), st.retry)
				var r *streamRefused
				if errors.As(err, &r) {
					wait = max(wait, r.retryAfter)
				}
				log.DebugContext(ctx, "client: feed: cannot open the event stream", "err", err, "wait", wait)
			default:
				log.ErrorContext(ctx, "client: feed: the server refused the event stream", "err", err)
				return err
			}
			if !sleep(ctx, wait) {
				return ctx.Err()
			}
			continue
		}
		if fresh || !canResume {
			sink.Recovered()
			log.InfoContext(ctx, "client: feed: following the event stream")
		} else {
			resumer.Resumed()
			log.InfoContext(ctx, "client: feed: the event stream resumed, nothing lost", "last_event_id", st.last)
		}
		open, fresh, st.bad = true, false, false
		opened := time.Now()
		err = f.follow(sctx, cancel, body, &st, sink)
		body.Close()
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sink.Lost()
		open = false
		// Afresh after an event it could not read (its change is
		// unknown), or when it saw no event: a stream that starts with
		// the next event does not say where that is, so a reconnection
		// cannot ask for what was appended meanwhile.
		fresh = st.bad || st.last == 0
		log.WarnContext(ctx, "client: feed: the event stream broke; reads go to the server until it is back", "err", err, "last_event_id", st.last)
		if time.Since(opened) > 5*time.Second && !st.bad {
			failures = 0
			if st.retry == 0 {
				continue // a stream that lasted: connect again at once
			}
		}
		failures++
		if !sleep(ctx, max(feedBackoff(f.c.retry, failures), st.retry)) {
			return ctx.Err()
		}
	}
}

// follow reads the stream, reporting each event to sink, until it ends,
// breaks or stays silent longer than f.idle (then it cancels the stream).
// It moves st on: the last event id seen, the reconnection time the
// stream asks for, and bad when an event could not be read.
func (f *Feed) follow(ctx context.Context, cancel context.CancelFunc, body io.Reader, st *followState, sink prompts.Sink) error {
	silent := time.AfterFunc(f.idle, cancel)
	defer silent.Stop()
	var (
		p  sseParser
		ev api.Event
	)
	err := scanLines(body, maxLine, func(line []byte) bool {
		silent.Reset(f.idle)
		e, ok := p.line(line)
		if p.retry > 0 {
			st.retry = time.Duration(p.retry) * time.Millisecond
		}
		if p.err != nil {
			return false // an event larger than the client reads
		}
		if !ok {
			return true
		}
		id, err := strconv.ParseInt(e.ID, 10, 64)
		ev = api.Event{}
		if err != nil || id <= st.last || api.UnmarshalLenient(e.Data, &ev) != nil || ev.ProjectID == "" {
			f.c.log.ErrorContext(ctx, "client: feed: an event that cannot be read", "id", e.ID, "type", e.Type)
			if err == nil && id > st.last {
				st.last = id // skipped: the sink starts afresh after it
			}
			st.bad = true
			return false
		}
		st.last = id
		inv := prompts.Invalidation{ProjectID: ev.ProjectID}
		if ev.PromptID != nil {
			inv.PromptID = *ev.PromptID
		}
		if ev.Type == prompts.EventEnvironmentDeleted {
			// Every read of the environment in the project goes.
			var env api.Environment
			if api.UnmarshalLenient(ev.Data, &env) == nil {
				inv.Environment = env.Name
			}
		}
		// The reads of what changed ask for a fresh answer, before the
		// sink drops what it holds: the replica that answers them may
		// not have heard of the change yet.
		f.c.fresh.wrote(inv.PromptID, inv.ProjectID)
		sink.Invalidate(inv)
		return true
	})
	if ctx.Err() != nil {
		return errors.New("the stream was silent for longer than " + f.idle.String())
	}
	if errors.Is(err, ErrTooLarge) || p.err != nil {
		// An event larger than the client reads (its id came first):
		// skipped, and the sink starts afresh after it, its change
		// unknown.
		f.c.log.ErrorContext(ctx, "client: feed: an event that cannot be read", "id", p.lastID, "err", errEventTooLarge())
		if id, err := strconv.ParseInt(p.lastID, 10, 64); err == nil && id > st.last {
			st.last = id
		}
		st.bad = true
		return errEventTooLarge()
	}
	return err
}

// maxFeedWait bounds the waits of a feed between its attempts to open
// the stream, unless the server asks for more: the cache is fresh again
// within about a second of the server's return, however long it was gone.
const maxFeedWait = time.Second

// feedBackoff is the wait before a feed's attempt after n failures: the
// policy's backoff, at most maxFeedWait.
func feedBackoff(p RetryPolicy, n int) time.Duration {
	p.MaxBackoff = min(p.maxBackoff(), maxFeedWait)
	p.MinBackoff = min(p.minBackoff(), p.MaxBackoff)
	return p.backoff(n)
}

// followState is what a Feed knows of its stream across connections.
type followState struct {
	last  int64         // the last event seen; 0 for a fresh start
	retry time.Duration // the reconnection time the stream asked for
	bad   bool          // an event could not be read
}

// sleep waits d, or until ctx ends: it reports whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
