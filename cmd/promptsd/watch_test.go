package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/testbin"
)

// The watch logs one line when the store goes down and one when it comes
// back (a ping answers), judging each failure by when its request
// started: one from before the recovery changes nothing; a failure whose
// client left says nothing of the store.
func TestStoreWatchJudgesFailuresByTheirStart(t *testing.T) {
	is := is.New(t)
	var logs testbin.Buffer
	w := newStoreWatch(slog.New(slog.NewTextHandler(&logs, nil)), nil)
	w.quiet = 0
	is.True(w.isDown()) // not up until open
	w.opened()
	is.True(!w.isDown())
	ctx := context.Background()
	down := prompts.Unavailable(errors.New("connection refused"))
	before := time.Now()
	w.failed(ctx, time.Now(), prompts.ErrNotFound) // the client's error: the store is up
	is.True(!w.isDown())
	w.failed(ctx, time.Now(), down)
	is.True(w.isDown())
	w.pinged(before, nil) // a ping from before the outage
	is.True(w.isDown())
	w.failed(ctx, time.Now(), down)
	w.pinged(time.Now(), nil) // started during it: recovered
	is.True(!w.isDown())
	w.failed(ctx, before, down) // started before the recovery
	is.True(!w.isDown())
	left, cancel := context.WithCancel(ctx)
	cancel()
	w.failed(left, time.Now(), down) // the client left
	is.True(!w.isDown())
	is.Equal(strings.Count(logs.String(), `msg="store unavailable`), 1)
	is.Equal(strings.Count(logs.String(), `msg="store recovered"`), 1)
	is.True(strings.Contains(logs.String(), "failed_requests=2"))
}

// A ping that answers while requests still fail (on connections the
// outage broke) does not end the outage: the store is back once no
// request has failed for the quiet time.
func TestStoreWatchWaitsForQuiet(t *testing.T) {
	is := is.New(t)
	w := newStoreWatch(slog.New(slog.DiscardHandler), nil)
	w.quiet = time.Hour
	w.opened()
	down := prompts.Unavailable(errors.New("connection reset"))
	w.failed(context.Background(), time.Now(), down)
	w.pinged(time.Now(), nil)
	is.True(w.isDown()) // a request failed just now
	w.quiet = 0
	w.pinged(time.Now(), nil)
	is.True(!w.isDown())
}

// While the store is down, the watch pings it every second, and logs its
// recovery without a request or a probe.
func TestStoreWatchPingsWhileDown(t *testing.T) {
	is := is.New(t)
	var logs testbin.Buffer
	w := newStoreWatch(slog.New(slog.NewTextHandler(&logs, nil)), nil)
	w.quiet = 0
	w.opened()
	var back atomic.Bool
	pings := make(chan struct{}, 100)
	ping := func(context.Context) error {
		pings <- struct{}{}
		if back.Load() {
			return nil
		}
		return errors.New("connection refused")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.run(ctx, ping) }()
	defer func() { cancel(); <-done }()
	w.failed(context.Background(), time.Now(), prompts.Unavailable(errors.New("connection refused")))
	<-pings // at once
	is.True(w.isDown())
	back.Store(true)
	waitFor(t, "the watch sees the store back", func() bool { return !w.isDown() })
	is.Equal(strings.Count(logs.String(), `msg="store recovered"`), 1)
}

// /readyz on PostgreSQL queries the schema's own tables: a dropped schema
// is not ready. Its body names no path nor address, on any store.
func TestServerReadinessMeansIt(t *testing.T) {
	is := is.New(t)
	dsn, schema := testDatabase(t)
	s := start(t, []string{"PROMPTS_DSN=" + dsn.String(), "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=" + testKey})
	resp, body := s.get(t, "/readyz")
	is.Equal(resp.StatusCode, 200)
	is.True(!strings.Contains(body, dsn.Host)) // no address
	db, err := sqlx.Open("postgres", dsn.String())
	is.NoErr(err)
	defer db.Close()
	_, err = db.Exec(`DROP SCHEMA "` + schema + `" CASCADE`)
	is.NoErr(err)
	resp, body = s.get(t, "/readyz")
	is.Equal(resp.StatusCode, 503) // the schema is gone: not ready
	is.True(!strings.Contains(body, dsn.Host) && !strings.Contains(body, schema))
	is.NoErr(s.stop(t))

	data := filepath.Join(t.TempDir(), "prompts.data")
	s = start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-data", data)
	resp, body = s.get(t, "/readyz")
	is.Equal(resp.StatusCode, 200)
	is.True(!strings.Contains(body, filepath.Dir(data))) // no path
	is.NoErr(s.stop(t))
}

// A client's unknown key is no error of the store: the watch neither
// counts it nor takes the store for down.
func TestStoreWatchLeavesUnknownKeysOut(t *testing.T) {
	is := is.New(t)
	var counted []string
	w := newStoreWatch(slog.New(slog.DiscardHandler), func(code string) { counted = append(counted, code) })
	w.opened()
	r := httptest.NewRequest("GET", "/v1/integration/projects", nil)
	w.storeError(r, httpapi.ErrUnknownKey)
	is.Equal(len(counted), 0)
	w.storeError(r, prompts.ErrNotFound)
	is.Equal(counted, []string{"not_found"})
	is.True(!w.isDown())
}
