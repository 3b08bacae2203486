package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/promptkit/prompts"
)

// The event log: s.events, oldest first, and s.eventsOf, the ids of each
// project's events, so that a read of some projects' events costs what
// their events cost, however many others have. A write appends its events
// under the write lock, in the step that makes the change, with the ids
// that follow s.lastEvent, and queues their deliveries (webhook.go) in the
// same step; with a file, they go into the write's journal record.

// emit appends e, the event of a change the write under way made, to the
// log, queues a delivery of it to every webhook it matches, and wakes the
// waiters of WaitEvents; s.mu is held. e holds a copy of its resource that
// nothing changes later.
func (s *Store) emit(e prompts.Event) {
	s.lastEvent++
	e.ID = s.lastEvent
	s.keepEvent(e)
	if s.journal != nil {
		s.step.events = append(s.step.events, e)
	}
	s.queue(e)
	close(s.appended)
	s.appended = make(chan struct{})
}

// point is rec.point, with the event of the record it writes.
func (s *Store) point(rec *prompt, env prompts.Environment, to pointer, action prompts.Action, c prompts.Change, now time.Time) bool {
	if !rec.point(env, to, action, c, now) {
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
// retention removed are prompts.ErrEventsExpired. With f.ProjectIDs, it
// reads the ids of those projects' events only (s.eventsOf).
func (s *Store) ListEvents(ctx context.Context, f prompts.EventFilter) ([]prompts.Event, bool, error) {
	if err := s.rlock(ctx, f.Validate()); err != nil {
		return nil, false, err
	}
	defer s.mu.RUnlock()
	if f.After != 0 && f.After < s.expiredThrough {
		return nil, false, prompts.ErrEventsExpired
	}
	out, more, _ := s.eventPage(f)
	return out, more, nil
}

// eventPage is ListEvents's page, and the number of events it looked at
// (for the tests: with f.ProjectIDs, at most the page, and one more per
// project, whatever the events of other projects). s.mu is held.
func (s *Store) eventPage(f prompts.EventFilter) (out []prompts.Event, more bool, looked int) {
	size := f.Size()
	if f.ProjectIDs == nil {
		i := s.eventIndex(f.After + 1)
		for ; i < len(s.events); i++ {
			looked++
			if len(out) == size {
				return out, true, looked
			}
			out = append(out, copyEvent(s.events[i]))
		}
		return out, false, looked
	}
	// A merge of the projects' ids after f.After, oldest first: heads
	// holds each project's rest, ordered by its first id.
	var heads [][]int64
	for i, p := range f.ProjectIDs {
		if slices.Contains(f.ProjectIDs[:i], p) {
			continue
		}
		ids := s.eventsOf[p]
		j, _ := slices.BinarySearch(ids, f.After+1)
		if j < len(ids) {
			heads = append(heads, ids[j:])
		}
	}
	slices.SortFunc(heads, func(a, b []int64) int { return cmp.Compare(a[0], b[0]) })
	for len(heads) > 0 {
		looked++
		if len(out) == size {
			return out, true, looked
		}
		out = append(out, copyEvent(s.events[s.eventIndex(heads[0][0])]))
		if heads[0] = heads[0][1:]; len(heads[0]) == 0 {
			heads = heads[1:]
			continue
		}
		// Move the first head to its place among the others, still sorted.
		j, _ := slices.BinarySearchFunc(heads[1:], heads[0][0], func(h []int64, id int64) int { return cmp.Compare(h[0], id) })
		first := heads[0]
		copy(heads, heads[1:j+1])
		heads[j] = first
	}
	return out, false, looked
}

// eventIndex returns the index in s.events of the first event with an id
// of at least id; s.mu is held.
func (s *Store) eventIndex(id int64) int {
	i, _ := slices.BinarySearchFunc(s.events, id, func(e prompts.Event, id int64) int { return cmp.Compare(e.ID, id) })
	return i
}

// keepEvent appends e, newer than every event kept, to the log and to its
// project's ids; s.mu is held for writing.
func (s *Store) keepEvent(e prompts.Event) {
	s.events = append(s.events, e)
	s.eventsOf[e.ProjectID] = append(s.eventsOf[e.ProjectID], e.ID)
}

// dropEvents removes the n oldest events from the log and from their
// projects' ids; s.mu is held for writing.
func (s *Store) dropEvents(n int) {
	if n == 0 {
		return
	}
	for _, e := range s.events[:n] {
		ids := s.eventsOf[e.ProjectID][1:] // e's is the project's oldest
		switch {
		case len(ids) == 0:
			delete(s.eventsOf, e.ProjectID)
		case len(ids) < cap(ids)/4:
			s.eventsOf[e.ProjectID] = slices.Clip(slices.Clone(ids)) // let the old array go
		default:
			s.eventsOf[e.ProjectID] = ids
		}
	}
	clear(s.events[:n]) // let the resources go
	s.events = s.events[n:]
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
	s.dropEvents(n)
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
