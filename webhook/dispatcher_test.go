package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/webhook"
)

// clock is a clock that moves only when told, shared by a Store and a
// Dispatcher.
type clock struct {
	mu    sync.Mutex
	t     time.Time
	reads int
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); c.reads++; return c.t }

func (c *clock) Reads() int { c.mu.Lock(); defer c.mu.Unlock(); return c.reads }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// request is what a receiver was sent.
type request struct {
	method string
	path   string
	header http.Header
	body   []byte
}

// receiver is a webhook's receiver on 127.0.0.1 that records what it is
// sent and answers with what answer says (200 when nil).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []request
	answer func(n int, w http.ResponseWriter, r *http.Request) // n counts from 1
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, request{r.Method, r.URL.RequestURI(), r.Header.Clone(), body})
		n := len(rc.got)
		rc.mu.Unlock()
		if rc.answer != nil {
			rc.answer(n, w, r)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// eventually waits up to 5 s for cond. It polls, in real time: what it
// waits for is a receiver on a real socket, or the record a Store keeps,
// neither of which can tell it (and synctest cannot fake the sockets).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.For(t, 5*time.Second, what, cond)
}

// never checks that cond stays false for a while: 150 ms of real time,
// in which a dispatcher that would wrongly act (on real sockets) does.
func never(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if poll.Until(150*time.Millisecond, cond) {
		t.Fatalf("unexpected: %s", what)
	}
}

// start runs d until the test ends or stop is called; stop returns once
// Run has returned, with its error.
func start(t *testing.T, d *webhook.Dispatcher) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after its context ended")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// subscribe creates a webhook to url.
func subscribe(t *testing.T, s prompts.WebhookStore, url string) prompts.Webhook {
	t.Helper()
	w, err := s.CreateWebhook(context.Background(), prompts.NewWebhook{URL: url, Secret: prompts.NewWebhookSecret()})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// project creates a project: one event.
func project(t *testing.T, s *memstore.Store, name string) prompts.Project {
	t.Helper()
	p, err := s.CreateProject(context.Background(), prompts.NewProject{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func attempts(t *testing.T, s prompts.WebhookStore, webhookID string) []prompts.DeliveryAttempt {
	t.Helper()
	as, _, err := s.ListDeliveryAttempts(context.Background(), webhookID, prompts.Page{Limit: prompts.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(as) // oldest first
	return as
}

func TestDispatcherDeliversEverySignedEvent(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := memstore.New()
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	hook := subscribe(t, s, rc.URL+"/hooks/prompts?token=t0k")

	p := project(t, s, "Support")
	pr, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ID, Key: "greeting", Name: "Greeting"})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: pr.ID, Content: "Hello {{name}}", Environments: []prompts.Environment{prompts.Production, prompts.Staging}})
	is.NoErr(err)
	events, _, err := s.ListEvents(ctx, prompts.EventFilter{})
	is.NoErr(err)
	is.Equal(len(events), 5) // project, prompt, version and two deployment records

	start(t, webhook.NewDispatcher(s, webhook.AllowPrivate()))
	eventually(t, "every event delivered and recorded", func() bool { return len(attempts(t, s, hook.ID)) == len(events) })

	got := rc.requests()
	is.Equal(len(got), len(events)) // each event once
	byID := map[string]request{}
	for _, r := range got {
		byID[r.header.Get("webhook-id")] = r
	}
	for _, e := range events {
		r, ok := byID[strconv.FormatInt(e.ID, 10)]
		is.True(ok) // the event's id in webhook-id
		want, err := api.MarshalEvent(e)
		is.NoErr(err)
		is.Equal(r.method, http.MethodPost)                                              // a POST
		is.Equal(r.path, "/hooks/prompts?token=t0k")                                     // to the webhook's URL
		is.Equal(string(r.body), string(want))                                           // of the event's JSON
		is.Equal(r.header.Get("Content-Type"), "application/json")                       // as JSON
		is.Equal(r.header.Get("User-Agent"), webhook.UserAgent)                          // saying who sends it
		is.NoErr(webhook.Verify(hook.Secret, r.header, r.body, time.Now(), time.Minute)) // signed
		ts, err := strconv.ParseInt(r.header.Get("webhook-timestamp"), 10, 64)
		is.NoErr(err)
		is.True(time.Since(time.Unix(ts, 0)) < time.Minute) // at the attempt's time
	}
	for _, a := range attempts(t, s, hook.ID) {
		is.Equal(a.StatusCode, http.StatusNoContent) // recorded with the answer
		is.Equal(a.Attempt, 1)                       // at the first attempt
		is.Equal(a.Error, "")
		is.True(a.Duration > 0) // and its duration
	}

	// Nothing more is sent: the deliveries ended.
	never(t, "a delivery sent again", func() bool { return len(rc.requests()) > len(events) })
}

func TestDispatcherRetriesAFailingReceiverOnSchedule(t *testing.T) {
	is := is.New(t)
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now))
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n <= 3 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	hook := subscribe(t, s, rc.URL)
	queued := c.Now()
	project(t, s, "Support")

	d := webhook.NewDispatcher(s, webhook.AllowPrivate(), webhook.WithClock(c.Now), webhook.WithPoll(time.Hour))
	start(t, d)
	for i, wait := range []time.Duration{0, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
		if wait > 0 {
			d.Wake()
			never(t, "a retry before it is due", func() bool { return len(rc.requests()) > i })
			c.Add(wait - time.Microsecond)
			d.Wake()
			never(t, "a retry before it is due", func() bool { return len(rc.requests()) > i })
			c.Add(time.Microsecond)
			d.Wake()
		}
		eventually(t, "attempt "+strconv.Itoa(i+1)+" recorded", func() bool { return len(attempts(t, s, hook.ID)) == i+1 })
	}
	as := attempts(t, s, hook.ID)
	for i, at := range []time.Duration{0, 2 * time.Second, 6 * time.Second, 14 * time.Second} {
		is.Equal(as[i].Attempt, i+1)           // numbered
		is.Equal(as[i].At, queued.Add(at))     // at 0, 2, 6 and 14 s
		is.Equal(as[i].EventID, as[0].EventID) // of the one event
		if i < 3 {
			is.Equal(as[i].StatusCode, http.StatusInternalServerError) // failed
		} else {
			is.Equal(as[i].StatusCode, http.StatusOK) // then delivered
		}
	}
	c.Add(time.Hour)
	d.Wake()
	never(t, "a delivered event sent again", func() bool { return len(rc.requests()) > 4 })
}

func TestDispatcherGivesUpADayAfterTheEvent(t *testing.T) {
	is := is.New(t)
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now))
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	hook := subscribe(t, s, rc.URL)
	project(t, s, "Support")

	d := webhook.NewDispatcher(s, webhook.AllowPrivate(), webhook.WithClock(c.Now), webhook.WithPoll(time.Hour))
	start(t, d)
	eventually(t, "the first attempt", func() bool { return len(attempts(t, s, hook.ID)) == 1 })
	c.Add(24*time.Hour - 5*time.Minute)
	d.Wake()
	eventually(t, "the second attempt", func() bool { return len(attempts(t, s, hook.ID)) == 2 })
	c.Add(5 * time.Minute) // at the day's end: the last attempt
	d.Wake()
	eventually(t, "the last attempt", func() bool { return len(attempts(t, s, hook.ID)) == 3 })
	c.Add(time.Hour)
	d.Wake()
	never(t, "an attempt after the last", func() bool { return len(rc.requests()) > 3 })
	is.Equal(len(attempts(t, s, hook.ID)), 3) // the delivery failed
}

func TestDispatcherRetriesWhenNoAnswerComes(t *testing.T) {
	is := is.New(t)
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now))
	release := make(chan struct{})
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			select { // no answer in time
			case <-r.Context().Done():
			case <-release:
			}
		}
	})
	defer close(release)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // nothing listens there
	slow, refused := subscribe(t, s, rc.URL), subscribe(t, s, closed.URL)
	project(t, s, "Support")

	d := webhook.NewDispatcher(s, webhook.AllowPrivate(), webhook.WithClock(c.Now), webhook.WithPoll(time.Hour), webhook.WithAttemptTimeout(200*time.Millisecond))
	start(t, d)
	eventually(t, "the attempts recorded", func() bool {
		return len(attempts(t, s, slow.ID)) == 1 && len(attempts(t, s, refused.ID)) == 1
	})
	a := attempts(t, s, slow.ID)[0]
	is.Equal(a.StatusCode, 0)                   // no answer
	is.Equal(a.Error, "no answer within 200ms") // in time
	is.True(a.Duration >= 200*time.Millisecond) // after the time allowed
	a = attempts(t, s, refused.ID)[0]
	is.Equal(a.StatusCode, 0)                                // no answer
	is.True(strings.Contains(a.Error, "connection refused")) // no connection
	is.True(!strings.Contains(a.Error, closed.URL))          // and no URL, which may hold a token
	t.Log(a.Error)

	c.Add(2 * time.Second)
	d.Wake()
	eventually(t, "the retries", func() bool {
		return len(attempts(t, s, slow.ID)) == 2 && len(attempts(t, s, refused.ID)) == 2
	})
	is.Equal(attempts(t, s, slow.ID)[1].StatusCode, http.StatusOK) // delivered when the receiver answers
}

func TestDispatcherFollowsNoRedirect(t *testing.T) {
	is := is.New(t)
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now))
	elsewhere := newReceiver(t, nil)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL, http.StatusTemporaryRedirect)
	})
	hook := subscribe(t, s, rc.URL)
	project(t, s, "Support")

	d := webhook.NewDispatcher(s, webhook.AllowPrivate(), webhook.WithClock(c.Now), webhook.WithPoll(time.Hour))
	start(t, d)
	eventually(t, "the attempt recorded", func() bool { return len(attempts(t, s, hook.ID)) == 1 })
	is.Equal(attempts(t, s, hook.ID)[0].StatusCode, http.StatusTemporaryRedirect) // the redirect is the answer
	is.Equal(len(elsewhere.requests()), 0)                                        // not followed
	c.Add(2 * time.Second)
	d.Wake()
	eventually(t, "a retry", func() bool { return len(attempts(t, s, hook.ID)) == 2 }) // and not a success
}

func TestDispatcherRefusesLoopbackAtEveryConnection(t *testing.T) {
	is := is.New(t)
	s := memstore.New()
	rc := newReceiver(t, nil)
	port := rc.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":"):]
	// The Store takes any well-formed URL; only the dialer stands between
	// these webhooks and the loopback receiver, by name and by address.
	byName := subscribe(t, s, "http://localhost"+port+"/hook")
	byAddress := subscribe(t, s, rc.URL+"/hook")
	is.True(webhook.CheckURL(context.Background(), byName.URL, false) != nil) // refused when subscribing, by the HTTP interface
	project(t, s, "Support")

	start(t, webhook.NewDispatcher(s, webhook.WithPoll(time.Hour)))
	eventually(t, "the attempts recorded", func() bool {
		return len(attempts(t, s, byName.ID)) == 1 && len(attempts(t, s, byAddress.ID)) == 1
	})
	for _, h := range []prompts.Webhook{byName, byAddress} {
		a := attempts(t, s, h.ID)[0]
		is.Equal(a.StatusCode, 0)                                             // no answer
		is.True(strings.Contains(a.Error, "refused to connect to 127.0.0.1")) // the connection refused
		is.True(strings.Contains(a.Error, "loopback"))                        // saying why
		t.Log(a.Error)
	}
	is.Equal(len(rc.requests()), 0) // the receiver reached by neither
}

func TestDispatcherBoundsTheAttemptsInFlight(t *testing.T) {
	is := is.New(t)
	s := memstore.New()
	var mu sync.Mutex
	inFlight, most := 0, 0
	release := make(chan struct{})
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
	})
	hook := subscribe(t, s, rc.URL)
	for i := range 6 {
		project(t, s, "Project "+strconv.Itoa(i))
	}
	start(t, webhook.NewDispatcher(s, webhook.AllowPrivate(), webhook.WithConcurrency(2), webhook.WithPoll(time.Hour)))
	eventually(t, "two attempts in flight", func() bool { return len(rc.requests()) == 2 })
	never(t, "a third attempt in flight", func() bool { return len(rc.requests()) > 2 })
	close(release)
	eventually(t, "every event delivered", func() bool { return len(attempts(t, s, hook.ID)) == 6 })
	is.Equal(most, 2) // never more than two at once
}

func TestDispatcherWakesOnWake(t *testing.T) {
	s := memstore.New()
	rc := newReceiver(t, nil)
	subscribe(t, s, rc.URL)
	cs := &counting{WebhookStore: s}
	d := webhook.NewDispatcher(cs, webhook.AllowPrivate(), webhook.WithPoll(time.Hour))
	start(t, d)
	eventually(t, "the first claim, which finds nothing", func() bool { return cs.claims.Load() == 1 })
	project(t, s, "Support")
	never(t, "a delivery before the next poll", func() bool { return len(rc.requests()) > 0 })
	d.Wake()
	eventually(t, "the delivery", func() bool { return len(rc.requests()) == 1 })
}

func TestDispatcherStopsAttemptsInFlight(t *testing.T) {
	is := is.New(t)
	s := memstore.New()
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			<-r.Context().Done() // until the dispatcher stops
		}
	})
	hook := subscribe(t, s, rc.URL)
	project(t, s, "Support")

	stop := start(t, webhook.NewDispatcher(s, webhook.AllowPrivate(), webhook.WithPoll(time.Hour)))
	eventually(t, "the attempt under way", func() bool { return len(rc.requests()) == 1 })
	began := time.Now()
	is.NoErr(stop())
	is.True(time.Since(began) < 2*time.Second) // Run returns at once
	as := attempts(t, s, hook.ID)
	is.Equal(len(as), 1)                                                  // the attempt recorded
	is.Equal(as[0].Error, "the dispatcher stopped before an answer came") // as cut short

	start(t, webhook.NewDispatcher(s, webhook.AllowPrivate(), webhook.WithPoll(time.Hour)))
	eventually(t, "the delivery, by the next dispatcher", func() bool { return len(attempts(t, s, hook.ID)) == 2 })
	is.Equal(attempts(t, s, hook.ID)[1].StatusCode, http.StatusOK) // due again at once
}

func TestDispatcherDeliversWhatARestartKept(t *testing.T) {
	is := is.New(t)
	c := newClock()
	path := filepath.Join(t.TempDir(), "prompts.data")
	s, err := memstore.Open(path, memstore.WithClock(c.Now))
	is.NoErr(err)
	up := make(chan struct{})
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		select {
		case <-up:
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	hook := subscribe(t, s, rc.URL)
	project(t, s, "Before")

	stop := start(t, webhook.NewDispatcher(s, webhook.AllowPrivate(), webhook.WithClock(c.Now), webhook.WithPoll(time.Hour)))
	eventually(t, "the first attempt", func() bool { return len(attempts(t, s, hook.ID)) == 1 })
	is.NoErr(stop())
	project(t, s, "After") // queued while no dispatcher runs
	is.NoErr(s.Close())

	close(up)
	s, err = memstore.Open(path, memstore.WithClock(c.Now))
	is.NoErr(err)
	defer s.Close()
	c.Add(2 * time.Second)
	start(t, webhook.NewDispatcher(s, webhook.AllowPrivate(), webhook.WithClock(c.Now), webhook.WithPoll(time.Hour)))
	eventually(t, "both events delivered", func() bool { return len(attempts(t, s, hook.ID)) == 3 })
	as := attempts(t, s, hook.ID)
	is.Equal(as[0].StatusCode, http.StatusServiceUnavailable) // the attempt before the restart, kept
	is.Equal(as[1].StatusCode, http.StatusOK)
	is.Equal(as[2].StatusCode, http.StatusOK)
	retried := as[1]
	if as[2].EventID == as[0].EventID {
		retried = as[2]
	}
	is.Equal(retried.Attempt, 2) // the retry, numbered after the kept attempt
	is.Equal(len(rc.requests()), 3)
}

func TestDispatcherRunsOnceAtATime(t *testing.T) {
	is := is.New(t)
	cs := &counting{WebhookStore: memstore.New()}
	d := webhook.NewDispatcher(cs, webhook.WithPoll(time.Hour))
	start(t, d)
	eventually(t, "the first Run's first claim", func() bool { return cs.claims.Load() == 1 })
	is.True(d.Run(context.Background()) != nil) // a second Run refused at once

	is.True(webhook.NewDispatcher(nil).Run(context.Background()) != nil) // and a Run without a store
}

func TestDispatcherRestsWhileEveryWorkerIsBusy(t *testing.T) {
	is := is.New(t)
	c := newClock()
	s := memstore.New(memstore.WithClock(c.Now))
	failing := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	release := make(chan struct{})
	defer close(release)
	busy := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { <-release })
	hook := subscribe(t, s, failing.URL)
	subscribe(t, s, busy.URL)
	project(t, s, "Support") // a delivery to each, the failing one first

	start(t, webhook.NewDispatcher(s, webhook.AllowPrivate(), webhook.WithClock(c.Now), webhook.WithConcurrency(1), webhook.WithPoll(20*time.Millisecond)))
	eventually(t, "the failed attempt, then the busy one", func() bool {
		return len(attempts(t, s, hook.ID)) == 1 && len(busy.requests()) == 1
	})
	c.Add(time.Minute) // the retry is due, but no worker is free
	// Real time: the poll (20 ms) is a real timer, and the busy worker
	// waits on a real socket, so synctest cannot make the time pass.
	// 50 ms for the dispatcher to settle, then 300 ms (15 polls) in which
	// a spinning one would read the clock thousands of times.
	time.Sleep(50 * time.Millisecond)
	before := c.Reads()
	time.Sleep(300 * time.Millisecond)
	is.True(c.Reads()-before < 10) // the dispatcher waits for a worker rather than spin
}

// Every retry it scheduled wakes the dispatcher when it falls due, not
// only the earliest: two deliveries failing 300 ms apart are both tried
// again on time, with no poll and no Wake to help. (In a synctest
// bubble: the dispatcher's timers are fake, and its receiver, on
// loopback, is refused before any packet is sent: a failed attempt.)
func TestDispatcherWakesForEveryRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		s := memstore.New()
		hook := subscribe(t, s, "http://127.0.0.1:9/hook")
		d := webhook.NewDispatcher(s, webhook.WithPoll(time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- d.Run(ctx) }()
		at := func() []time.Duration { // the attempts' times, from the first
			var out []time.Duration
			for _, a := range attempts(t, s, hook.ID) {
				out = append(out, a.At.Sub(attempts(t, s, hook.ID)[0].At))
			}
			return out
		}
		project(t, s, "One")
		d.Wake()
		synctest.Wait()
		is.Equal(at(), []time.Duration{0}) // the first attempt
		// The bubble's time, not real time: these sleeps take none.
		time.Sleep(300 * time.Millisecond)
		project(t, s, "Two")
		d.Wake()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		// Each retried 2 s after its first attempt, then 4 s after that.
		is.Equal(at(), []time.Duration{0, 300 * time.Millisecond, 2 * time.Second, 2300 * time.Millisecond, 6 * time.Second, 6300 * time.Millisecond})
		cancel()
		is.NoErr(<-done)
	})
}

// counting is a WebhookStore that counts the claims made of it.
type counting struct {
	prompts.WebhookStore
	claims atomic.Int64
}

func (c *counting) ClaimDeliveries(ctx context.Context, now time.Time, max int, lease time.Duration) ([]prompts.Delivery, error) {
	c.claims.Add(1)
	return c.WebhookStore.ClaimDeliveries(ctx, now, max, lease)
}

// An idle dispatcher with many retries pending, none due for ten
// minutes, claims once a poll at most (a claim of the 500 pending
// deliveries that finds none due costs microseconds: see memstore's
// BenchmarkClaimNoneDue), makes no attempt, and makes them all when they
// fall due. (In a synctest bubble: the ten minutes pass at once. The
// receiver, on loopback, is refused before any packet is sent.)
func TestDispatcherIdlesUntilRetriesFallDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		ctx := context.Background()
		s := memstore.New()
		hook := subscribe(t, s, "http://127.0.0.1:9/hook")
		for i := range 500 {
			project(t, s, "P"+strconv.Itoa(i))
		}
		due := time.Now().Add(10 * time.Minute)
		ds, err := s.ClaimDeliveries(ctx, time.Now(), prompts.MaxLimit, time.Minute)
		is.NoErr(err)
		for _, dl := range ds { // each failed once: due again in ten minutes
			is.NoErr(s.FinishDelivery(ctx, dl.ID, prompts.DeliveryAttempt{Error: "no answer within 10s"}, due))
		}
		is.Equal(len(attempts(t, s, hook.ID)), 500)

		cs := &counting{WebhookStore: s}
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- webhook.NewDispatcher(cs).Run(ctx) }() // the default poll: a second
		// The bubble's time, not real time: ten minutes take none.
		time.Sleep(10*time.Minute - time.Second)
		synctest.Wait()
		is.True(cs.claims.Load() <= 600)            // once a second at most: no spin
		is.Equal(len(attempts(t, s, hook.ID)), 500) // and nothing attempted
		time.Sleep(2 * time.Second)                 // the retries fall due
		synctest.Wait()
		is.Equal(len(attempts(t, s, hook.ID)), 1000) // each attempted once due
		cancel()
		is.NoErr(<-done)
	})
}
