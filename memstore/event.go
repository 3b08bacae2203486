package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/promptkit/prompts"
)

// The event log: s.events, oldest first. A write appends its events under
// the write lock, in the step that makes the change, with the ids that
// follow s.lastEvent, and queues their deliveries (webhook.go) in the same
// step; with a file, they go into the write's journal record.

// emit appends e, the event of a change the write under way made, to the
// log, queues a delivery of it to every webhook it matches, and wakes the
// waiters of WaitEvents; s.mu is held. e holds a copy of its resource that
// nothing changes later.
func (s *Store) emit(e prompts.Event) {
	s.lastEvent++
	e.ID = s.lastEvent
	s.events = append(s.events, e)
	if s.journal != nil {
		s.step.events = append(s.step.events, e)
	}
	s.queue(e)
	close(s.appended)
	s.appended = make(chan struct{})
}

// point is rec.point, with the event of the record it writes.
func (s *Store) point(rec *prompt, env prompts.Environment, n int, action prompts.Action, c prompts.Change, now time.Time) bool {
	if !rec.point(env, n, action, c, now) {
		return false
	}
	d := copyDeployment(rec.deployments[len(rec.deployments)-1])
	s.emit(prompts.Event{Type: prompts.EventDeploymentCreated, ProjectID: rec.p.ProjectID, PromptID: rec.p.ID, CreatedAt: d.CreatedAt, Deployment: &d})
	return true
}

// emitPrompt appends the event of a prompt created or changed at now.
func (s *Store) emitPrompt(t prompts.EventType, p prompts.Prompt, now time.Time) {
	p = p.Copy()
	s.emit(prompts.Event{Type: t, ProjectID: p.ProjectID, PromptID: p.ID, CreatedAt: now, Prompt: &p})
}

// ListEvents implements prompts.EventLog. Events after f.After that the
// retention removed are prompts.ErrEventsExpired.
func (s *Store) ListEvents(ctx context.Context, f prompts.EventFilter) ([]prompts.Event, bool, error) {
	if err := s.rlock(ctx, f.Validate()); err != nil {
		return nil, false, err
	}
	defer s.mu.RUnlock()
	if f.After != 0 && f.After < s.expiredThrough {
		return nil, false, prompts.ErrEventsExpired
	}
	i, _ := slices.BinarySearchFunc(s.events, f.After+1, func(e prompts.Event, id int64) int { return cmp.Compare(e.ID, id) })
	var out []prompts.Event
	for ; i < len(s.events); i++ {
		e := &s.events[i]
		if !f.Keeps(e.ProjectID) {
			continue
		}
		if len(out) == f.Size() {
			return out, true, nil
		}
		out = append(out, copyEvent(*e))
	}
	return out, false, nil
}

// WaitEvents implements prompts.EventLog. It returns at once when events
// after the id after exist, else when one is appended or ctx ends. On a
// Store that writes no more (closed, or its file failed) it returns that
// failure instead of waiting for events that cannot come.
func (s *Store) WaitEvents(ctx context.Context, after int64) error {
	if err := s.rlock(ctx, prompts.EventFilter{After: after}.Validate()); err != nil {
		return err
	}
	last, appended, err := s.lastEvent, s.appended, s.writable()
	s.mu.RUnlock()
	if last > after {
		return nil
	}
	if err != nil {
		return err
	}
	select {
	case <-appended:
		return nil
	case <-ctx.Done():
		return prompts.ContextDone(ctx.Err())
	}
}

// LastEventID implements prompts.EventLog: the id of the newest event,
// also when the retention removed it.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	if err := s.rlock(ctx, nil); err != nil {
		return 0, err
	}
	defer s.mu.RUnlock()
	return s.lastEvent, nil
}

// expireEvents removes the events, the delivery attempts and the
// deliveries queued longer ago than the event retention at now, oldest
// first: a few at each write, never on a goroutine; s.mu is held.
func (s *Store) expireEvents(now time.Time) {
	cutoff := now.Add(-s.eventRetention)
	n := 0
	for n < len(s.events) && s.events[n].CreatedAt.Before(cutoff) {
		s.expiredThrough = s.events[n].ID
		n++
	}
	if n > 0 {
		clear(s.events[:n]) // let the resources go
		s.events = s.events[n:]
	}
	for id, as := range s.attempts {
		n := 0
		for n < len(as) && as[n].At.Before(cutoff) {
			n++
		}
		if n > 0 {
			s.attempts[id] = slices.Clone(as[n:])
		}
	}
	n = 0
	for ; n < len(s.deliveryOrder); n++ {
		id := s.deliveryOrder[n]
		d, ok := s.deliveries[id]
		if ok && !d.queuedAt.Before(cutoff) {
			break
		}
		delete(s.deliveries, id)
	}
	if n > 0 {
		clear(s.deliveryOrder[:n])
		s.deliveryOrder = s.deliveryOrder[n:]
	}
}

// copyEvent returns e with a copy of its resource.
func copyEvent(e prompts.Event) prompts.Event {
	switch {
	case e.Project != nil:
		p := *e.Project
		e.Project = &p
	case e.Prompt != nil:
		p := e.Prompt.Copy()
		e.Prompt = &p
	case e.Version != nil:
		v := e.Version.Copy()
		e.Version = &v
	case e.Deployment != nil:
		d := copyDeployment(*e.Deployment)
		e.Deployment = &d
	}
	return e
}
