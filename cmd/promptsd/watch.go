package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// storeWatch follows the store's state, and logs each change of state
// once: "store unavailable" at the first request that the store failed
// as unavailable (httpapi tells every store error, see WithErrorObserver),
// "store recovered", with the count of failed requests, when a ping of
// the store answers again and no request has failed for a second (run
// pings it while it is down; so does /readyz): the pool's connections
// broken by the outage fail a few requests after the store is back, and
// are not another outage. An outage is two log lines, however many requests fail
// during it. A failure speaks for the moment its request started: one
// that started before the store came back does not start another outage.
// It counts every error by code. Until open, the store is not up.
type storeWatch struct {
	log    *slog.Logger
	errors func(code string) // counts an error; may be nil

	mu       sync.Mutex
	open     bool      // the store opened
	down     bool      // the last state: unavailable
	since    time.Time // when it changed last
	failures int       // requests failed since it went down
	lastFail time.Time // when a request failed as unavailable last
	quiet    time.Duration
	wake     chan struct{}
}

// recoveryQuiet is how long no request may have failed before the store
// is taken as back.
const recoveryQuiet = time.Second

func newStoreWatch(log *slog.Logger, errors func(code string)) *storeWatch {
	return &storeWatch{log: log, errors: errors, quiet: recoveryQuiet, wake: make(chan struct{}, 1)}
}

// opened says the store is open, and up.
func (w *storeWatch) opened() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open = true
}

// storeError is httpapi's error observer: it notes an error of the store
// in answer to r.
func (w *storeWatch) storeError(r *http.Request, err error) {
	if errors.Is(err, httpapi.ErrUnknownKey) {
		return // a client's wrong key, answered 401: nothing of the store
	}
	started := time.Now()
	if info := infoFrom(r.Context()); info != nil {
		started = info.start
	}
	w.failed(r.Context(), started, err)
}

// failed notes err, the error of a call to the store made with ctx that
// started at started. A call that failed because its caller left (the
// client went away, the server stops) says nothing about the store.
func (w *storeWatch) failed(ctx context.Context, started time.Time, err error) {
	if err == nil || (ctx.Err() != nil && ctx.Err() != context.DeadlineExceeded) {
		return
	}
	code := prompts.ErrorCode(err)
	if w.errors != nil {
		w.errors(string(code))
	}
	if code != prompts.CodeUnavailable {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.down:
		w.failures++
		w.lastFail = time.Now()
	case started.After(w.since):
		w.down, w.since, w.failures = true, time.Now(), 1
		w.lastFail = w.since
		w.log.Error("store unavailable; requests that need it are answered 503 until it is back", "err", err)
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// pinged notes the result of a ping of the store that started at
// started: the only way back up.
func (w *storeWatch) pinged(started time.Time, err error) {
	if err != nil {
		w.failed(context.Background(), started, prompts.Unavailable(err))
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down && started.After(w.since) && time.Since(w.lastFail) >= w.quiet {
		w.down = false
		w.log.Info("store recovered", "unavailable_for", time.Since(w.since).Round(time.Millisecond), "failed_requests", w.failures)
		w.since = time.Now()
	}
}

// run pings the store every second while it is down, until ctx ends.
func (w *storeWatch) run(ctx context.Context, ping func(context.Context) error) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-t.C:
		}
		if !w.isDown() || !w.isOpen() {
			continue
		}
		started := time.Now()
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			continue // still down; failures count requests, not pings
		}
		w.pinged(started, nil)
	}
}

func (w *storeWatch) isOpen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.open
}

// isDown reports whether the store is not up: not open yet, or
// unavailable since its last failure.
func (w *storeWatch) isDown() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.down || !w.open
}
