package httpapi

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// The event stream: GET /events with Accept: text/event-stream.
//
// Each stream is its handler's goroutine and nothing else. The streams of
// a Handler share a tail of the log (the newest events, encoded once as
// frames): one of them at a time, the waiter, waits on the store
// (EventLog.WaitEvents) and reads the new events once for all; the
// others wait for the tail to move on, and pick from it the events of
// their projects. A stream whose position is older than the tail's first
// event reads the store itself, the events of its projects only, until it
// reaches the tail.

// The tail's bounds: its newest events, up to so many and so many bytes
// of frames. A stream that falls further behind reads the store.
const (
	tailEvents = 1024
	tailBytes  = 8 << 20
)

const (
	// catchUpLimit is the page a stream behind the tail reads at once.
	catchUpLimit = 100
	// fillPages is how many pages of prompts.MaxLimit events the waiter
	// reads at most before it lets another stream wait: a burst larger
	// than that is read by the next waiter.
	fillPages = 8
	// streamBatch is how many events a stream takes from the tail per
	// write.
	streamBatch = 16
	// spuriousWait is the waiter's pause when the store woke it with
	// nothing new, so that a store that does so often costs no spin.
	spuriousWait = 2 * time.Millisecond
	// minErrWait and maxErrWait bound the wait after the store failed.
	minErrWait = 100 * time.Millisecond
	maxErrWait = 5 * time.Second
)

// stream answers with the events after f.After (after the newest when it
// is 0), then every event as it comes, until the client leaves,
// CloseStreams is called, or the key of a (a kept key) is revoked or
// expires. Before it answers 200 it answers 410 for an f.After whose
// following events are gone, and the store's errors.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, a Access, f prompts.EventFilter) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(h.closing.ctx, cancel)()
	if h.closing.ctx.Err() != nil {
		w.Header()["Retry-After"] = []string{"1"}
		h.problem(w, kindOf(prompts.CodeUnavailable), "the server is shutting down: connect again", nil)
		return
	}
	if !a.ExpiresAt.IsZero() {
		if !time.Now().Before(a.ExpiresAt) {
			h.unauthenticated(w)
			return
		}
		// The stream of a key ends when the key expires.
		ctx, cancel = context.WithDeadline(ctx, a.ExpiresAt)
		defer cancel()
	}
	t := h.tail
	if err := t.join(ctx); err != nil {
		h.storeError(w, r, err)
		return
	}
	defer t.leave()
	if a.KeyID != "" {
		// The stream of a kept key ends when the tail reads the key's
		// revocation (key.revoked), here or on another process.
		kw, ok := t.watchKey(a.KeyID, cancel)
		if !ok {
			h.unauthenticated(w)
			return
		}
		defer t.unwatchKey(kw)
	}

	pos := f.After
	var pending []prompts.Event
	if pos == 0 {
		last, err := h.events.LastEventID(ctx)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		pos = last
	} else if t.behind(pos) {
		// This read also tells whether the events after pos are gone
		// (410), before the answer starts.
		page, _, err := h.events.ListEvents(ctx, prompts.EventFilter{After: pos, ProjectIDs: f.ProjectIDs, Limit: catchUpLimit})
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		pending = page
	}

	s := &sse{w: w, rc: http.NewResponseController(w), keepAlive: h.keepAlive, log: h.log}
	hd := w.Header()
	hd["Content-Type"] = hdrEventStream
	hd["Cache-Control"] = hdrNoCache
	hd["X-Accel-Buffering"] = hdrNo
	s.deadline()
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if err := s.rc.Flush(); err != nil {
		h.log.DebugContext(ctx, "httpapi: cannot flush an event stream", "err", err)
		return
	}
	s.lastWrite = time.Now()
	if len(pending) > 0 {
		if s.writeEvents(pending, f.ProjectIDs) != nil {
			return
		}
		pos = pending[len(pending)-1].ID
		pending = nil
	}
	s.run(ctx, t, pos, f.ProjectIDs)
}

// Header values of a stream.
var (
	hdrEventStream = []string{"text/event-stream"}
	hdrNoCache     = []string{"no-cache"}
	hdrNo          = []string{"no"}
)

// sse writes one event stream.
type sse struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	keepAlive time.Duration
	log       *slog.Logger
	lastWrite time.Time
	errWait   time.Duration // the wait after the store failed a catch-up read
}

// deadline moves the connection's write deadline on before a write, so
// that the server's WriteTimeout does not cut the stream; a writer that
// has none is fine.
func (s *sse) deadline() {
	_ = s.rc.SetWriteDeadline(time.Now().Add(2 * s.keepAlive))
}

// write writes frames and flushes them.
func (s *sse) write(frames ...[]byte) error {
	s.deadline()
	for _, f := range frames {
		if _, err := s.w.Write(f); err != nil {
			return err
		}
	}
	if err := s.rc.Flush(); err != nil {
		return err
	}
	s.lastWrite = time.Now()
	return nil
}

var keepAliveFrame = []byte(": keep-alive\n\n")

// writeEvents encodes and writes the events of projects (nil: every
// project), flushed once at the end. An event that cannot be encoded, a
// Store's bug, is logged and skipped.
func (s *sse) writeEvents(events []prompts.Event, projects []string) error {
	keep := prompts.EventFilter{ProjectIDs: projects}
	var buf [4096]byte
	s.deadline()
	for _, e := range events {
		if !keep.Keeps(e.ProjectID) {
			continue
		}
		b, err := appendFrame(buf[:0], e)
		if err != nil {
			s.log.Error("httpapi: an event the stream cannot send", "id", e.ID, "err", err)
			continue
		}
		if _, err := s.w.Write(b); err != nil {
			return err
		}
	}
	if err := s.rc.Flush(); err != nil {
		return err
	}
	s.lastWrite = time.Now()
	return nil
}

// appendFrame appends e as a server-sent event: its id, its type as the
// event's name, and its JSON, on one line (JSON strings escape line
// breaks), as data.
func appendFrame(b []byte, e prompts.Event) ([]byte, error) {
	start := len(b)
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, e.ID, 10)
	b = append(b, "\nevent: "...)
	b = append(b, e.Type...)
	b = append(b, "\ndata: "...)
	b, err := api.AppendEvent(b, e)
	if err != nil { // an unknown type included: nothing of it is sent
		return b[:start], err
	}
	return append(b, '\n', '\n'), nil
}

// run streams the events after pos until ctx ends or a write fails.
func (s *sse) run(ctx context.Context, t *tail, pos int64, projects []string) {
	timer := time.NewTimer(s.keepAlive)
	defer timer.Stop()
	var batch [streamBatch][]byte
	for ctx.Err() == nil {
		if time.Since(s.lastWrite) >= s.keepAlive {
			if s.write(keepAliveFrame) != nil {
				return
			}
		}
		frames, next, first, behind, changed, waiter := t.since(pos, projects, batch[:0])
		switch {
		case behind:
			if !s.catchUp(ctx, t.log, &pos, first, projects, timer) {
				return
			}
			continue
		case len(frames) > 0:
			err := s.write(frames...)
			clear(batch[:]) // let the tail drop them
			if err != nil {
				return
			}
			pos = next
			continue
		}
		pos = next
		deadline := s.lastWrite.Add(s.keepAlive)
		if waiter {
			t.await(ctx, deadline)
			continue
		}
		timer.Reset(time.Until(deadline))
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	}
}

// catchUp reads the page after *pos from the store and writes its events,
// for a stream behind the tail (first is the tail's start). It reports
// false when the stream must end: ctx ended, a write failed, or the
// events after *pos are gone (the client reconnects with Last-Event-ID
// and gets 410). When the store fails, it waits a moment (retried by the
// caller, keep-alives going on meanwhile).
func (s *sse) catchUp(ctx context.Context, log prompts.EventLog, pos *int64, first int64, projects []string, timer *time.Timer) bool {
	// The store filters: a key of some projects reads theirs only, not
	// through every other project's events.
	page, _, err := log.ListEvents(ctx, prompts.EventFilter{After: *pos, ProjectIDs: projects, Limit: catchUpLimit})
	switch {
	case ctx.Err() != nil:
		return false
	case errors.Is(err, prompts.ErrEventsExpired):
		s.log.DebugContext(ctx, "httpapi: a stream fell behind the events kept; ending it", "after", *pos)
		return false
	case err != nil:
		s.errWait = min(max(2*s.errWait, minErrWait), maxErrWait)
		s.log.DebugContext(ctx, "httpapi: a stream cannot read the event log", "err", err, "retry_in", s.errWait)
		timer.Reset(min(s.errWait, time.Until(s.lastWrite.Add(s.keepAlive))))
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		return true
	}
	s.errWait = 0
	if len(page) == 0 {
		// Nothing of these projects after *pos: nothing between it and
		// the tail's start either.
		*pos = max(*pos, first)
		return true
	}
	if s.writeEvents(page, projects) != nil {
		return false
	}
	*pos = page[len(page)-1].ID
	return true
}

// tail is the newest part of the event log, shared by a Handler's
// streams: the frames of every event with an id in (first, last], at
// most tailEvents of them and tailBytes of frames. It is kept while
// streams are open ("warm"), from the newest event when the first one
// opened.
type tail struct {
	log    prompts.EventLog
	logger *slog.Logger

	mu      sync.Mutex
	ring    []tailEvent // circular; its oldest at head
	head, n int
	bytes   int
	first   int64
	last    int64
	warm    bool
	streams int
	waiter  bool          // a stream waits on the store for the tail
	changed chan struct{} // closed, and replaced, when the tail moved on or its waiter left
	retryAt time.Time     // after the store failed, when to wait on it again
	errWait time.Duration
	// The streams of kept keys, by key id, ended when the tail reads the
	// key's revocation; and the keys revoked since the tail is warm (at
	// most maxRevoked), refused a stream.
	keys    map[string]map[*keyWatch]struct{}
	revoked map[string]struct{}
}

// keyWatch is a stream of a kept key: cancel ends it.
type keyWatch struct {
	id     string
	cancel context.CancelFunc
}

// maxRevoked bounds the revocations a tail remembers.
const maxRevoked = 4096

// watchKey registers a stream of the kept key id, ended by cancel when
// the tail reads its revocation; false when it read it already.
func (t *tail) watchKey(id string, cancel context.CancelFunc) (*keyWatch, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.revoked[id]; ok {
		return nil, false
	}
	kw := &keyWatch{id: id, cancel: cancel}
	if t.keys == nil {
		t.keys = make(map[string]map[*keyWatch]struct{})
	}
	if t.keys[id] == nil {
		t.keys[id] = make(map[*keyWatch]struct{})
	}
	t.keys[id][kw] = struct{}{}
	return kw, true
}

func (t *tail) unwatchKey(kw *keyWatch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.keys[kw.id], kw)
	if len(t.keys[kw.id]) == 0 {
		delete(t.keys, kw.id)
	}
}

// revoke ends the streams of the kept key id; t.mu is held.
func (t *tail) revoke(id string) {
	if t.revoked == nil || len(t.revoked) >= maxRevoked {
		t.revoked = make(map[string]struct{})
	}
	t.revoked[id] = struct{}{}
	for kw := range t.keys[id] {
		kw.cancel()
	}
}

// tailEvent is one event of the tail.
type tailEvent struct {
	id      int64
	project string
	frame   []byte // shared by every stream: never changed
}

func newTail(log prompts.EventLog, logger *slog.Logger) *tail {
	return &tail{log: log, logger: logger, changed: make(chan struct{})}
}

// join counts a stream in, and makes the tail warm (from the newest
// event) when it was not.
func (t *tail) join(ctx context.Context) error {
	t.mu.Lock()
	if t.warm {
		t.streams++
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()
	last, err := t.log.LastEventID(ctx)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.warm {
		t.reset(last)
		t.warm = true
	}
	t.streams++
	return nil
}

// leave counts a stream out; the last one lets the tail go.
func (t *tail) leave() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.streams--
	if t.streams == 0 {
		t.reset(0)
		t.ring, t.warm, t.revoked = nil, false, nil
	}
}

// reset empties the tail, to start after the event last; t.mu is held.
func (t *tail) reset(last int64) {
	clear(t.ring)
	t.head, t.n, t.bytes = 0, 0, 0
	t.first, t.last = last, last
}

// at returns the i-th event of the ring, the oldest being 0; t.mu is held.
func (t *tail) at(i int) *tailEvent { return &t.ring[(t.head+i)%len(t.ring)] }

// behind reports whether a stream at pos must read the store: it is older
// than the tail's first event.
func (t *tail) behind(pos int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.warm || pos < t.first
}

// since appends to out (up to its capacity) the frames of the events
// after pos of these projects (nil: every project), and returns the
// position they take the stream to. With behind, the stream must read the
// store first (first is where the tail starts). With nothing to send,
// changed is closed when there may be, and waiter says that the caller
// is now the waiter: it must call await.
func (t *tail) since(pos int64, projects []string, out [][]byte) (frames [][]byte, next, first int64, behind bool, changed chan struct{}, waiter bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.warm || pos < t.first {
		return out, pos, t.first, true, nil, false
	}
	keep := prompts.EventFilter{ProjectIDs: projects}
	next = max(pos, t.last)
	i := sort.Search(t.n, func(i int) bool { return t.at(i).id > pos })
	for ; i < t.n; i++ {
		e := t.at(i)
		if !keep.Keeps(e.project) {
			continue
		}
		if len(out) == cap(out) {
			next = t.at(i - 1).id
			break
		}
		out = append(out, e.frame)
	}
	if len(out) > 0 {
		return out, next, t.first, false, nil, false
	}
	if !t.waiter {
		t.waiter, waiter = true, true
	}
	return out, next, t.first, false, t.changed, waiter
}

// broadcast wakes every stream waiting on the tail; t.mu is held.
func (t *tail) broadcast() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// await is the waiter's: it waits on the store for events after the
// tail's last, until deadline (the waiter's next keep-alive), and reads
// them into the tail. Either way it stops being the waiter, and wakes
// every stream, so that another may wait while this one writes.
func (t *tail) await(ctx context.Context, deadline time.Time) {
	t.mu.Lock()
	after, retryAt := t.last, t.retryAt
	t.mu.Unlock()
	if wait := time.Until(retryAt); wait > 0 {
		// The store failed a moment ago: let it be until retryAt.
		timer := time.NewTimer(min(wait, time.Until(deadline)))
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
		if time.Now().Before(retryAt) {
			t.release(nil)
			return
		}
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for {
		err := t.log.WaitEvents(wctx, after)
		switch {
		case wctx.Err() != nil: // the keep-alive is due, or the client left
			t.release(nil)
			return
		case err != nil:
			t.release(err)
			return
		}
		fctx, cancel := context.WithTimeout(ctx, maxErrWait)
		read := t.fill(fctx, after)
		cancel()
		if read {
			return
		}
		// WaitEvents may return early (its contract allows it): nothing
		// new yet. Wait again, a moment later, still the waiter.
		timer := time.NewTimer(spuriousWait)
		select {
		case <-timer.C:
		case <-wctx.Done():
		}
		timer.Stop()
	}
}

// release stops the waiter being one and wakes every stream; a store
// error makes the next waiter wait a while.
func (t *tail) release(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.errWait = min(max(2*t.errWait, minErrWait), maxErrWait)
		t.retryAt = time.Now().Add(t.errWait)
		t.logger.Debug("httpapi: the event streams cannot read the event log", "err", err, "retry_in", t.errWait)
	}
	t.waiter = false
	t.broadcast()
}

// fill reads the events after the id after into the tail, a page at a
// time, each page shown to the streams at once, and releases the waiter
// when it is done, or failed. It reports false, and does nothing, when
// there is no event after after.
func (t *tail) fill(ctx context.Context, after int64) bool {
	var buf []byte
	for n := range fillPages {
		page, more, err := t.log.ListEvents(ctx, prompts.EventFilter{After: after, Limit: prompts.MaxLimit})
		if errors.Is(err, prompts.ErrEventsExpired) {
			// The tail itself fell behind what is kept (an event log
			// that moved on for longer than its retention while the tail
			// waited): start again after the newest; every stream behind
			// it ends when it reads the store.
			last, err := t.log.LastEventID(ctx)
			if err != nil {
				t.release(err)
				return true
			}
			t.mu.Lock()
			t.reset(last)
			t.mu.Unlock()
			t.release(nil)
			return true
		}
		if err != nil {
			t.release(err)
			return true
		}
		if len(page) == 0 && n == 0 {
			return false
		}
		// Encoded outside the lock, into one buffer for the page.
		buf = buf[:0]
		ends := make([]int, len(page))
		for i, e := range page {
			if buf, err = appendFrame(buf, e); err != nil {
				t.logger.Error("httpapi: an event the streams cannot send", "id", e.ID, "err", err)
			}
			ends[i] = len(buf)
		}
		frames := bytes.Clone(buf) // of its own size: the tail keeps it
		final := !more || len(page) == 0
		t.mu.Lock()
		start := 0
		for i, e := range page {
			if e.Type == prompts.EventKeyRevoked && e.Key != nil && t.warm && e.ID > t.last {
				t.revoke(e.Key.ID)
			}
			t.push(tailEvent{id: e.ID, project: e.ProjectID, frame: frames[start:ends[i]:ends[i]]})
			start = ends[i]
		}
		if final {
			t.waiter = false
		}
		t.errWait, t.retryAt = 0, time.Time{}
		t.broadcast()
		t.mu.Unlock()
		if final {
			return true
		}
		after = page[len(page)-1].ID
	}
	t.release(nil)
	return true
}

// push appends e, newer than every event of the tail, dropping the oldest
// events past the tail's bounds; an event that could not be encoded (no
// frame) only moves the tail on. t.mu is held.
func (t *tail) push(e tailEvent) {
	if !t.warm || e.id <= t.last {
		return
	}
	t.last = e.id
	if len(e.frame) == 0 {
		return
	}
	if t.ring == nil {
		t.ring = make([]tailEvent, tailEvents)
	}
	for t.n > 0 && (t.n == len(t.ring) || t.bytes+len(e.frame) > tailBytes) {
		t.drop()
	}
	*t.at(t.n) = e
	t.n++
	t.bytes += len(e.frame)
}

// drop removes the oldest event; t.mu is held.
func (t *tail) drop() {
	old := t.at(0)
	t.first = old.id
	t.bytes -= len(old.frame)
	*old = tailEvent{}
	t.head = (t.head + 1) % len(t.ring)
	t.n--
}

// CloseStreams ends every event stream the handler serves, promptly, and
// makes it answer later stream requests 503 (with Retry-After), so that
// clients reconnect to another server: register it with
// http.Server.RegisterOnShutdown, since Shutdown waits for streams that
// would otherwise never end. The rest of the interface goes on
// answering. It is safe to call more than once.
func (h *Handler) CloseStreams() { h.closing.cancel() }

// closing is a context that CloseStreams ends: every stream ends with it,
// and new ones are refused.
type closing struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newClosing() closing {
	ctx, cancel := context.WithCancel(context.Background())
	return closing{ctx, cancel}
}
