package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// The event log (prompts.EventLog) over GET /events: its pages as JSON,
// and its stream (text/event-stream) for WaitEvents and Feed. A key sees
// the events of its projects only.

// maxEventID is the largest event id the interface takes in after (18
// digits).
const maxEventID = 999_999_999_999_999_999

// ListEvents implements prompts.EventLog: GET /events. The interface
// takes one project_id: f.ProjectIDs of several are applied by the client
// over the whole log; an unknown project has no events.
func (c *Client) ListEvents(ctx context.Context, f prompts.EventFilter) ([]prompts.Event, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	if err := ctx.Err(); err != nil {
		return nil, false, prompts.ContextDone(err)
	}
	switch {
	case f.ProjectIDs == nil:
		return c.events(ctx, f.After, "", f.Size())
	case len(f.ProjectIDs) == 0:
		return []prompts.Event{}, false, c.expired(ctx, f.After)
	case len(f.ProjectIDs) == 1 && f.ProjectIDs[0] != "":
		// "" (the events of no project, the keys') is filtered below:
		// the interface reads an empty project_id as every project.
		page, more, err := c.events(ctx, f.After, f.ProjectIDs[0], f.Size())
		if errors.Is(err, prompts.ErrNotFound) {
			// The project is unknown, or the key may not see it: none of
			// its events, unless those after f.After are gone.
			return []prompts.Event{}, false, c.expired(ctx, f.After)
		}
		return page, more, err
	}
	keep := inSet(f.ProjectIDs)
	return filtered(f.Size(), f.After,
		func(after int64) ([]prompts.Event, bool, error) { return c.events(ctx, after, "", prompts.MaxLimit) },
		func(e prompts.Event) bool { return keep(e.ProjectID) },
		func(e prompts.Event) int64 { return e.ID })
}

// events reads one page of the log.
func (c *Client) events(ctx context.Context, after int64, projectID string, limit int) ([]prompts.Event, bool, error) {
	var q query
	if after > 0 {
		q.add("after", strconv.FormatInt(min(after, maxEventID), 10))
	}
	q.add("project_id", projectID)
	q.add("limit", strconv.Itoa(limit))
	page, more, err := list(ctx, c, "/events", q, nil, func(e api.Event) api.Event { return e })
	if err != nil {
		return nil, false, err
	}
	// A prompt's revision is not in an event's data (the interface's
	// fixed prompt fields hold none): it is 0.
	out := make([]prompts.Event, len(page))
	for i, w := range page {
		if out[i], err = w.Domain(); err != nil {
			return nil, false, prompts.Internal(err)
		}
	}
	return out, more, nil
}

// expired returns ErrEventsExpired when the events after after are gone,
// else nil.
func (c *Client) expired(ctx context.Context, after int64) error {
	if after == 0 {
		return nil
	}
	_, _, err := c.events(ctx, after, "", 1)
	if errors.Is(err, prompts.ErrEventsExpired) {
		return err
	}
	return nil
}

// next returns the id of the first event after after (0 when there is
// none yet).
func (c *Client) next(ctx context.Context, after int64) (int64, error) {
	page, _, err := c.events(ctx, after, "", 1)
	if err != nil || len(page) == 0 {
		return 0, err
	}
	return page[0].ID, nil
}

// LastEventID implements prompts.EventLog. The interface has no read of
// the newest id: the client finds it with pages of one event, probing
// after ids that grow exponentially from the oldest kept, then by
// bisection, some 2·log2(n) requests for a log of n events.
func (c *Client) LastEventID(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, prompts.ContextDone(err)
	}
	var err error
	for range 3 { // the oldest events may go while it probes: start again
		var last int64
		if last, err = c.lastEventID(ctx); !errors.Is(err, prompts.ErrEventsExpired) {
			return last, err
		}
	}
	return 0, err
}

func (c *Client) lastEventID(ctx context.Context) (int64, error) {
	lo, err := c.next(ctx, 0) // the oldest kept
	if err != nil || lo == 0 {
		return 0, err
	}
	// lo is an event; find hi, past the newest.
	var hi int64
	for step := int64(1); ; step *= 2 {
		x := min(lo+step, maxEventID)
		e, err := c.next(ctx, x)
		if err != nil {
			return 0, err
		}
		if e == 0 {
			hi = x
			break
		}
		lo = e
		if x == maxEventID {
			return lo, nil
		}
	}
	// The newest is in [lo, hi]: lo is an event, none is after hi.
	for lo < hi {
		mid := lo + (hi-lo)/2
		e, err := c.next(ctx, mid)
		if err != nil {
			return 0, err
		}
		if e == 0 {
			hi = mid
		} else {
			lo = e
		}
	}
	return lo, nil
}

// WaitEvents implements prompts.EventLog over the stream: it returns when
// the stream after the id after delivers an event (at once when some
// follow already), when the events after it are gone (the next
// ListEvents says so), or with ctx's error. A stream that cannot be
// opened, or breaks, is an error (ErrUnavailable).
func (c *Client) WaitEvents(ctx context.Context, after int64) error {
	if err := (prompts.EventFilter{After: after}).Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return prompts.ContextDone(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, err := c.openStream(sctx, after)
	if errors.Is(err, prompts.ErrEventsExpired) {
		return nil // events follow, gone: the caller learns it from ListEvents
	}
	if err != nil {
		return err
	}
	defer body.Close()
	if after == 0 {
		// The stream starts after the newest event when it opened: one
		// appended before that is in the log.
		if id, err := c.next(ctx, 0); err != nil || id > 0 {
			return err
		}
	}
	var p sseParser
	err = scanLines(body, maxLine, func(line []byte) bool {
		_, ok := p.line(line)
		return !ok && p.err == nil // until the first event
	})
	if ctx.Err() != nil {
		return prompts.ContextDone(ctx.Err())
	}
	if p.err != nil {
		return p.err
	}
	if errors.Is(err, ErrTooLarge) {
		return err
	}
	if err != nil {
		return &prompts.Error{Code: prompts.CodeUnavailable, Message: "the event stream broke", Err: err}
	}
	return nil
}

// openStream opens the event stream after the id after (after the newest
// when 0), with the key's events. It answers the error a refusal means
// (ErrEventsExpired for a 410), as a *streamRefused.
func (c *Client) openStream(ctx context.Context, after int64) (io.ReadCloser, error) {
	req, err := c.newRequest(ctx, request{method: http.MethodGet, path: "/events",
		header: http.Header{"Accept": {"text/event-stream"}, "Cache-Control": hdrNoCache}})
	if err != nil {
		return nil, prompts.Internal(err)
	}
	if after > 0 {
		req.Header["Last-Event-Id"] = []string{strconv.FormatInt(after, 10)}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		if rerr := refusedRedirect(err); rerr != nil {
			return nil, rerr
		}
		return nil, c.transportError(ctx, err)
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(res.Body, maxProblemSize))
		return nil, &streamRefused{err: problemError(&response{status: res.StatusCode, header: res.Header, body: b}), retryAfter: retryAfter(res.Header)}
	}
	return res.Body, nil
}

// streamRefused is the error of a stream the server refused: what its
// answer means, and the wait its Retry-After asks for.
type streamRefused struct {
	err        error
	retryAfter time.Duration
}

func (e *streamRefused) Error() string { return e.err.Error() }
func (e *streamRefused) Unwrap() error { return e.err }
