package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// UserAgent is the User-Agent header of every delivery.
const UserAgent = "promptkit-prompts-webhook/1"

// AttemptTimeout bounds an attempt: an answer that has not come by then
// (status line and headers) is a failed attempt.
const AttemptTimeout = 10 * time.Second

// The dispatcher's defaults.
const (
	DefaultConcurrency = 16          // attempts in flight at once
	DefaultPoll        = time.Second // how often an idle dispatcher claims deliveries
	// lease is how long a claim keeps a delivery from other dispatchers:
	// longer than an attempt and its record.
	lease = 3 * AttemptTimeout
	// maxErrorWait is the longest wait after a claim that failed.
	maxErrorWait = 30 * time.Second
	// drain is how much of an answer's body is read, so that the
	// connection can serve the next attempt.
	drain = 64 << 10
	// maxError is the most of an error's text an attempt's record keeps:
	// a receiver that fails for a day costs the Store one small record
	// per attempt, whatever its TLS library has to say.
	maxError = 160
)

// Dispatcher delivers the queued deliveries of a prompts.WebhookStore: it
// claims those that are due, POSTs each event to its webhook's URL,
// signed, and records every attempt, with a retry as RetryAt says when it
// failed. Any number of dispatchers, in any number of processes, may
// share a store: a claimed delivery is in the hands of one of them.
//
// Create one with NewDispatcher and call Run on a goroutine of your own.
type Dispatcher struct {
	store       prompts.WebhookStore
	log         *slog.Logger
	clock       prompts.Clock
	concurrency int
	poll        time.Duration
	private     bool
	timeout     time.Duration // AttemptTimeout, but in tests
	client      *http.Client
	wake        chan struct{}
	running     atomic.Bool
}

// Option configures a Dispatcher.
type Option func(*Dispatcher)

// WithLogger sets the logger: it logs a delivery that failed for good and
// a store that cannot be reached (Warn), and every attempt (Debug). By
// default nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(d *Dispatcher) { d.log = l } }

// AllowPrivate lets the dispatcher connect to any address: loopback,
// private and the other addresses it refuses by default (see the package
// doc). Use it for receivers on a private network only, trusted by
// whoever may create webhooks.
func AllowPrivate() Option { return func(d *Dispatcher) { d.private = true } }

// WithClock sets the clock that times attempts and retries and is passed
// to ClaimDeliveries; by default the system's.
func WithClock(c prompts.Clock) Option { return func(d *Dispatcher) { d.clock = c } }

// WithConcurrency sets how many attempts may be in flight at once, 1 to
// prompts.MaxLimit; DefaultConcurrency by default.
func WithConcurrency(n int) Option {
	return func(d *Dispatcher) {
		if n >= 1 {
			d.concurrency = min(n, prompts.MaxLimit)
		}
	}
}

// WithPoll sets how often an idle dispatcher claims the deliveries that
// are due, when nothing wakes it earlier (see Wake); DefaultPoll by
// default. Deliveries that another process queues, or whose retry
// another process scheduled, wait up to that long.
func WithPoll(p time.Duration) Option {
	return func(d *Dispatcher) {
		if p > 0 {
			d.poll = p
		}
	}
}

// NewDispatcher returns a Dispatcher of the deliveries that store queues.
func NewDispatcher(store prompts.WebhookStore, opts ...Option) *Dispatcher {
	d := &Dispatcher{store: store, concurrency: DefaultConcurrency, poll: DefaultPoll, timeout: AttemptTimeout, wake: make(chan struct{}, 1)}
	for _, o := range opts {
		o(d)
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.client = newClient(d.private)
	return d
}

// newClient returns the client of the deliveries. Its dialer checks the
// address of every connection, after DNS, unless private; it takes no
// proxy from the environment (a proxy would connect for it, unchecked),
// follows no redirect, and gives up on an answer after AttemptTimeout.
func newClient(private bool) *http.Client {
	dialer := &net.Dialer{Timeout: AttemptTimeout, KeepAlive: 30 * time.Second}
	if !private {
		dialer.Control = control
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           100,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    AttemptTimeout,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Wake makes a running dispatcher claim deliveries now rather than at its
// next poll: call it when events were appended (prompts.EventLog's
// WaitEvents tells). It never blocks.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then stops the attempts in flight, records
// them as failed with a retry due at once, and returns nil once they have
// all stopped. Between, it claims the deliveries that are due whenever an
// attempt ends, Wake is called, a retry it scheduled falls due or the
// poll interval passes. A store that fails is logged and tried again
// later. Run returns an error at once when it is running already, or has
// no store.
func (d *Dispatcher) Run(ctx context.Context) error {
	if d.store == nil {
		return errors.New("webhook: the dispatcher has no store")
	}
	if !d.running.CompareAndSwap(false, true) {
		return errors.New("webhook: the dispatcher is running already")
	}
	defer d.running.Store(false)
	defer d.client.CloseIdleConnections()

	var wg sync.WaitGroup
	defer wg.Wait()
	finished := make(chan time.Time, d.concurrency) // a retry's time, or zero
	inFlight := 0
	due := true                 // deliveries may be due: claim
	var retries []time.Time     // the retries this dispatcher scheduled, not yet due
	errWait := time.Duration(0) // the wait after a failed claim
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	select {
	case <-d.wake: // a Wake before Run: due is true already
	default:
	}

	for {
		wait := d.poll
		if due && inFlight < d.concurrency {
			now := d.clock.Now()
			ds, err := d.store.ClaimDeliveries(ctx, now, d.concurrency-inFlight, lease)
			switch {
			case ctx.Err() != nil:
				return nil
			case err != nil:
				errWait = min(max(2*errWait, d.poll), maxErrorWait)
				wait = errWait
				d.log.Warn("webhook: cannot claim deliveries", "err", err, "retry_in", errWait)
			default:
				errWait = 0
				due = len(ds) == d.concurrency-inFlight // more may be due
				// Those due now are claimed, or another process's.
				retries = slices.DeleteFunc(retries, func(at time.Time) bool { return !at.After(now) })
				for _, dl := range ds {
					inFlight++
					wg.Add(1)
					go func() {
						defer wg.Done()
						finished <- d.deliver(ctx, dl)
					}()
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return nil
		}
		if len(retries) > 0 && inFlight < d.concurrency { // (when full, an attempt's end wakes it)
			wait = min(wait, max(slices.MinFunc(retries, time.Time.Compare).Sub(d.clock.Now()), 0))
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case at := <-finished:
			inFlight--
			if !at.IsZero() {
				retries = append(retries, at)
			}
		case <-d.wake:
			due = true
		case <-timer.C:
			due = true
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// deliver makes one attempt of dl and records it. It returns when the
// delivery is due again, or zero when it ended or was not recorded.
func (d *Dispatcher) deliver(ctx context.Context, dl prompts.Delivery) time.Time {
	a := prompts.DeliveryAttempt{At: d.clock.Now()}
	log := d.log.With("webhook_id", dl.Webhook.ID, "event_id", dl.Event.ID, "attempt", dl.Attempts+1)
	var retryAt time.Time
	if err := d.post(ctx, dl, &a); err != nil {
		// An attempt that cannot be made (an event that cannot be
		// encoded, a secret that cannot sign) is the last.
		a.Error = clip(err.Error(), maxError)
	} else if a.StatusCode/100 != 2 {
		if ctx.Err() != nil && a.StatusCode == 0 {
			a.Error, retryAt = "the dispatcher stopped before an answer came", d.clock.Now()
		} else if at, ok := RetryAt(dl.Attempts+1, dl.QueuedAt, d.clock.Now()); ok {
			retryAt = at
		}
	}
	log.Debug("webhook: attempt", "status", a.StatusCode, "err", a.Error, "duration", a.Duration, "retry_at", retryAt)
	if a.StatusCode/100 != 2 && retryAt.IsZero() {
		log.Warn("webhook: delivery failed for good", "status", a.StatusCode, "err", a.Error, "attempts", dl.Attempts+1)
	}
	// Recorded even when ctx has ended, so that a stop loses no attempt.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AttemptTimeout)
	defer cancel()
	switch err := d.store.FinishDelivery(fctx, dl.ID, a, retryAt); {
	case errors.Is(err, prompts.ErrNotFound):
		log.Debug("webhook: delivery gone (its webhook deleted?)")
		return time.Time{}
	case err != nil:
		log.Warn("webhook: cannot record an attempt; the delivery is tried again when its claim ends", "err", err)
		return time.Time{}
	}
	return retryAt
}

// post makes the attempt and sets a's status code, or its error when no
// answer came, and duration. It returns an error only for an attempt that
// cannot be made at all.
func (d *Dispatcher) post(ctx context.Context, dl prompts.Delivery, a *prompts.DeliveryAttempt) error {
	body, err := api.MarshalEvent(dl.Event)
	if err != nil {
		return err
	}
	id := strconv.FormatInt(dl.Event.ID, 10)
	sig, err := Sign(dl.Webhook.Secret, id, a.At, body)
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, dl.Webhook.URL, bytes.NewReader(body))
	if err != nil {
		return errors.New("webhook: cannot make a request to the webhook's URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderID, id)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(a.At.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	start := time.Now()
	resp, err := d.client.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drain))
		_ = resp.Body.Close()
		a.StatusCode = resp.StatusCode
	}
	a.Duration = time.Since(start)
	if err != nil {
		a.Error = clip(attemptError(actx, err, d.timeout), maxError)
	}
	return nil
}

// clip returns s cut to at most n bytes, at a character's start.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// attemptError says why no answer came, without the URL (which may hold
// a token).
func attemptError(actx context.Context, err error, timeout time.Duration) string {
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		return "no answer within " + timeout.String()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
