package mcp

import (
	"context"
	"errors"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
)

// tail follows the event log for every view of a handler: one reader,
// however many sessions. It runs while the handler has a view.
type tail struct {
	cancel  context.CancelFunc
	started chan struct{} // closed once the tail knows where it starts
	done    chan struct{}
}

// tailRetry is the wait after a failed read of the log: well under the
// second within which a change reaches the sessions.
const tailRetry = 200 * time.Millisecond

// startTail starts the tail from the log's newest event; h.mu is held.
// The view that starts it waits for started before its first sync, so
// that a change the sync misses comes after the tail's start.
func (h *Handler) startTail() *tail {
	ctx, cancel := context.WithCancel(context.Background())
	t := &tail{cancel: cancel, started: make(chan struct{}), done: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer close(t.done)
		last, err := h.events.LastEventID(ctx)
		close(t.started)
		h.follow(ctx, last, err != nil)
	}()
	return t
}

func (t *tail) stop() {
	t.cancel()
	<-t.done
}

// follow reads the log after last until ctx ends, and syncs the prompts
// the events change in the views they concern. resync makes it sync every
// view first (its position is unknown).
func (h *Handler) follow(ctx context.Context, last int64, resync bool) {
	for ctx.Err() == nil {
		if resync {
			n, err := h.events.LastEventID(ctx)
			if err == nil {
				err = h.syncViews(ctx, nil)
			}
			if err != nil {
				h.pause(ctx, err)
				continue
			}
			last, resync = n, false
		}
		page, more, err := h.events.ListEvents(ctx, prompts.EventFilter{After: last, Limit: prompts.MaxLimit})
		switch {
		case errors.Is(err, prompts.ErrEventsExpired):
			resync = true
			continue
		case err != nil:
			h.pause(ctx, err)
			continue
		}
		if len(page) > 0 {
			if err := h.apply(ctx, page); err != nil {
				h.pause(ctx, err)
				continue // the same page again
			}
			last = page[len(page)-1].ID
		}
		if more {
			continue
		}
		if err := h.events.WaitEvents(ctx, last); err != nil && ctx.Err() == nil {
			h.pause(ctx, err)
		}
	}
}

func (h *Handler) pause(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	h.log.Debug("mcp: reading the event log failed; retrying", "err", err)
	t := time.NewTimer(tailRetry)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// change is a prompt whose listing may have changed, in one environment or
// ("" ) in all.
type change struct {
	promptID  string
	projectID string
	env       prompts.Environment
}

// apply syncs the prompts that the events change: what an environment
// points at (deployment.created) in that environment's views, and a
// prompt's key or description (prompt.updated) in every view. Versions
// and new prompts change nothing listed until a deployment does.
func (h *Handler) apply(ctx context.Context, events []prompts.Event) error {
	var changes []change
	for _, e := range events {
		switch e.Type {
		case prompts.EventKeyRevoked:
			if e.Key != nil {
				h.revoke(e.Key.ID)
			}
		case prompts.EventDeploymentCreated:
			if e.Deployment != nil {
				changes = append(changes, change{e.PromptID, e.ProjectID, e.Deployment.Environment})
			}
		case prompts.EventPromptUpdated:
			changes = append(changes, change{e.PromptID, e.ProjectID, ""})
		}
	}
	if len(changes) == 0 {
		return nil
	}
	return h.syncViews(ctx, changes)
}

// revoke ends the sessions of the kept key id, and refuses new ones of
// it while the tail runs (a request whose key was authenticated from a
// memory not yet told).
func (h *Handler) revoke(id string) {
	h.mu.Lock()
	if h.revoked == nil || len(h.revoked) >= maxRevoked {
		h.revoked = make(map[string]struct{})
	}
	h.revoked[id] = struct{}{}
	var end []*sdk.ServerSession
	for _, s := range h.sessions {
		if s.ss != nil && s.view.access.KeyID == id {
			end = append(end, s.ss)
		}
	}
	for ss, v := range h.served {
		if v.access.KeyID == id {
			end = append(end, ss)
		}
	}
	h.mu.Unlock()
	for _, ss := range end {
		ss.Close()
	}
}

// maxRevoked bounds the revocations a handler remembers.
const maxRevoked = 4096

// syncViews syncs the changes in the views they concern, or every view
// wholly when changes is nil.
func (h *Handler) syncViews(ctx context.Context, changes []change) error {
	h.mu.Lock()
	views := make([]*view, 0, len(h.views))
	for _, v := range h.views {
		views = append(views, v)
	}
	h.mu.Unlock()
	for _, v := range views {
		select {
		case <-v.ready:
		default:
			continue // its first sync reads what is new
		}
		if v.err != nil {
			continue
		}
		if changes == nil {
			if err := v.syncAll(ctx); err != nil {
				return err
			}
			continue
		}
		// Each prompt once; deployed when what is active in the view's
		// environment changed.
		var order []string
		deployed := make(map[string]bool)
		for _, c := range changes {
			if (c.env != "" && c.env != v.env) || !v.access.Allows(c.projectID) {
				continue
			}
			if _, ok := deployed[c.promptID]; !ok {
				order = append(order, c.promptID)
			}
			deployed[c.promptID] = deployed[c.promptID] || c.env != ""
		}
		for _, id := range order {
			if err := v.sync(ctx, id, deployed[id]); err != nil {
				return err
			}
		}
	}
	return nil
}
