package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/lib/pq"

	"github.com/promptkit/prompts"
)

// The event log: the table events, its ids from the one row of
// event_counter (see the package doc and appendEvents).

var (
	_ prompts.EventLog = (*Store)(nil)
	_ prompts.Sink     = (*Store)(nil)
)

// EventPoll is the longest WaitEvents waits before it returns to let its
// caller list again, when nothing wakes it earlier.
const EventPoll = time.Second

// WithEventRetention sets how long the Store keeps events, and the
// attempts to deliver them (default prompts.DefaultEventRetention); d ≤ 0
// keeps the default. Older events are removed by later writes, a few at a
// time; a delivery not ended by then goes with its event.
func WithEventRetention(d time.Duration) Option {
	return storeOption(func(s *Store) {
		if d > 0 {
			s.retention = d
		}
	})
}

// cutoff returns the time before which events are past the retention.
func (s *Store) cutoff() time.Time { return s.clock.Now().Add(-s.retention) }

// pendingEvent is an event a transaction appends when it commits (see
// tx.commit).
type pendingEvent struct {
	typ           prompts.EventType
	projectID     string
	promptID      string
	data          string // a prompt's JSON, for the prompt's events; an environment's, for its events
	versionNumber int    // for version.created
	deploymentID  string // for deployment.created
	at            time.Time
}

// emit records e, an event of what tx changed, to be appended when it
// commits.
func (t *tx) emit(e pendingEvent) { t.events = append(t.events, e) }

// commit appends the events tx made, after everything else it did, then
// commits: the event counter's lock is held from that last statement to
// the commit only.
func (t *tx) commit(ctx context.Context) error {
	if n := len(t.events); n > 0 {
		types, projects, promptIDs, data, deployments := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		numbers := make([]int64, n)
		times := make([]string, n)
		for i, e := range t.events {
			types[i], projects[i], promptIDs[i], data[i], deployments[i] = string(e.typ), e.projectID, e.promptID, e.data, e.deploymentID
			numbers[i] = int64(e.versionNumber)
			times[i] = e.at.Format(time.RFC3339Nano)
		}
		st, err := t.stmt(ctx, qAppendEvents)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, pq.StringArray(types), pq.StringArray(projects), pq.StringArray(promptIDs), pq.StringArray(data),
			pq.Int64Array(numbers), pq.StringArray(deployments), pq.StringArray(times), t.s.cutoff()); err != nil {
			return err
		}
	}
	return t.Commit()
}

// promptEvent returns the event of prompt p, created or changed at p's
// time or at.
func promptEvent(typ prompts.EventType, p prompts.Prompt, at time.Time) (pendingEvent, error) {
	b, err := json.Marshal(eventPrompt(p))
	if err != nil {
		return pendingEvent{}, err
	}
	return pendingEvent{typ: typ, projectID: p.ProjectID, promptID: p.ID, data: string(b), at: at}, nil
}

// ListEvents implements prompts.EventLog. It reads the primary key, or
// the index (project_id, id) per project. An After below the oldest id
// kept, less one, is prompts.ErrEventsExpired.
func (s *Store) ListEvents(ctx context.Context, f prompts.EventFilter) ([]prompts.Event, bool, error) {
	return boundedPage(ctx, func() ([]prompts.Event, bool, error) { return s.listEvents(ctx, f) })
}

func (s *Store) listEvents(ctx context.Context, f prompts.EventFilter) ([]prompts.Event, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	n := f.Size()
	q, args := qListEvents, []any{f.After, n + 1}
	if f.ProjectIDs != nil {
		q, args = qListEventsByProjects, append(args, pq.StringArray(eventProjects(f.ProjectIDs)))
	}
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, false, s.fail(ctx, err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, false, s.fail(ctx, err)
	}
	defer rows.Close()
	var (
		oldest sql.NullInt64 // NULL: no event yet
		out    = make([]prompts.Event, 0, min(n+1, 16))
	)
	for rows.Next() {
		var r eventRow
		if err := rows.Scan(append([]any{&oldest}, r.dest()...)...); err != nil {
			return nil, false, s.fail(ctx, err)
		}
		if !r.id.Valid {
			continue // the oldest id, without events
		}
		e, err := r.event()
		if err != nil {
			return nil, false, prompts.Internal(err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.fail(ctx, err)
	}
	if f.After != 0 && oldest.Valid && f.After < oldest.Int64-1 {
		// Ids follow each other but for those of a write that failed
		// after taking them (its events never appear): this may call
		// expired a reader who missed nothing but such a hole.
		return nil, false, prompts.ErrEventsExpired
	}
	if len(out) > n {
		return out[:n], true, nil
	}
	return out, false, nil
}

// LastEventID implements prompts.EventLog: the id of the newest event (the
// retention never removes it).
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	return bounded(ctx, func() (int64, error) { return s.lastEventID(ctx) })
}

func (s *Store) lastEventID(ctx context.Context) (int64, error) {
	st, err := s.stmt(ctx, qLastEventID)
	if err != nil {
		return 0, s.fail(ctx, err)
	}
	var last int64
	if err := st.QueryRowContext(ctx).Scan(&last); err != nil {
		return 0, s.fail(ctx, err)
	}
	return last, nil
}

// WaitEvents implements prompts.EventLog. It reads the newest id once and
// returns at once when it is past after; otherwise it waits, without a
// goroutine and without reading again, until the Store is woken, ctx ends,
// or EventPoll passes. The Store is woken by its own writes, and by a Feed
// that reports to it (as a prompts.Sink) the writes of other processes:
// without a Feed, a waiter sees those within EventPoll.
func (s *Store) WaitEvents(ctx context.Context, after int64) error {
	if err := (prompts.EventFilter{After: after}).Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return prompts.ContextDone(err)
	}
	woken := s.waitChan() // before the read: a wake-up after it is not missed
	last, err := s.LastEventID(ctx)
	if err != nil || last > after {
		return err
	}
	t := time.NewTimer(EventPoll)
	defer t.Stop()
	select {
	case <-woken:
	case <-t.C:
	case <-ctx.Done():
		return prompts.ContextDone(ctx.Err())
	}
	return nil
}

// waitChan returns the channel that the next wake-up closes.
func (s *Store) waitChan() <-chan struct{} {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	if s.waitCh == nil {
		s.waitCh = make(chan struct{})
	}
	return s.waitCh
}

// wake ends the waits of WaitEvents: events may have been appended.
func (s *Store) wake() {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	if s.waitCh != nil {
		close(s.waitCh)
		s.waitCh = nil
	}
}

// woke wakes the waiters of WaitEvents after a write that succeeded, and
// returns its result.
func woke[T any](s *Store, v T, err error) (T, error) {
	if err == nil {
		s.wake()
	}
	return v, err
}

// Invalidate implements prompts.Sink: a Feed reports a write, which may
// have appended events; the waiters of WaitEvents list again.
func (s *Store) Invalidate(prompts.Invalidation) { s.wake() }

// Lost implements prompts.Sink: the waiters of WaitEvents list again, and
// go on waiting at most EventPoll at a time.
func (s *Store) Lost() { s.wake() }

// Recovered implements prompts.Sink: what was written while the Feed was
// lost may have appended events; the waiters of WaitEvents list again.
func (s *Store) Recovered() { s.wake() }

// eventRow receives the columns eventCols.
type eventRow struct {
	id                       sql.NullInt64
	typ, projectID, promptID sql.NullString
	created                  sql.NullTime
	data                     []byte
	project                  projectRow
	version                  versionRow
	deployment               deploymentRow
}

func (r *eventRow) dest() []any {
	d := []any{&r.id, &r.typ, &r.projectID, &r.promptID, &r.created, &r.data}
	d = append(d, r.project.dest()...)
	d = append(d, r.version.dest()...)
	return append(d, r.deployment.dest()...)
}

// event returns the event, with the resource it holds or names; an error
// when that resource is missing, which the schema's rules prevent.
func (r *eventRow) event() (prompts.Event, error) {
	e := prompts.Event{
		ID:        r.id.Int64,
		Type:      prompts.EventType(r.typ.String),
		ProjectID: r.projectID.String,
		PromptID:  r.promptID.String,
		CreatedAt: r.created.Time.UTC(),
	}
	ok := false
	switch e.Type {
	case prompts.EventProjectCreated:
		var p prompts.Project
		if p, ok = r.project.project(); ok {
			e.Project = &p
		}
	case prompts.EventPromptCreated, prompts.EventPromptUpdated:
		var ep eventPrompt
		if err := json.Unmarshal(r.data, &ep); err == nil {
			p := prompts.Prompt(ep)
			p.CreatedAt = p.CreatedAt.UTC()
			e.Prompt, ok = &p, true
		}
	case prompts.EventVersionCreated:
		var v prompts.PromptVersion
		if v, ok = r.version.version(e.PromptID); ok {
			e.Version = &v
		}
	case prompts.EventDeploymentCreated:
		d, found, err := r.deployment.deployment(e.PromptID)
		if err != nil {
			return prompts.Event{}, err
		}
		if ok = found; ok {
			e.Deployment = &d
		}
	case prompts.EventKeyCreated, prompts.EventKeyRevoked:
		var ek eventKey
		if err := json.Unmarshal(r.data, &ek); err == nil {
			k := ek.key()
			e.Key, ok = &k, true
		}
	case prompts.EventEnvironmentCreated, prompts.EventEnvironmentUpdated, prompts.EventEnvironmentDeleted:
		var ee eventEnvironment
		if err := json.Unmarshal(r.data, &ee); err == nil {
			env := prompts.ProjectEnvironment(ee)
			env.CreatedAt = env.CreatedAt.UTC()
			e.Environment, ok = &env, true
		}
	}
	if !ok {
		return prompts.Event{}, fmt.Errorf("sqlstore: event %d (%s) names no resource", e.ID, e.Type)
	}
	return e, nil
}

// eventPrompt is a prompt as the data of its event's row holds it: the
// column's format, kept from the releases that wrote prompts.Prompt
// directly. It has the fields of prompts.Prompt, so that a conversion
// moves one to the other.
type eventPrompt struct {
	ID              string    `json:"id"`
	ProjectID       string    `json:"project_id"`
	Key             string    `json:"key"`
	Name            string    `json:"name"`
	Description     *string   `json:"description"`
	LatestVersionID string    `json:"latest_version_id"`
	CreatedAt       time.Time `json:"created_at"`
	Revision        int64     `json:"revision"`
	Replayed        bool      `json:"-"`
}

// eventProjects returns the well-formed ids of ids, sorted, each once, and
// "" when ids holds it: the events of no project (those of keys).
func eventProjects(ids []string) []string {
	out := validIDs(ids)
	if slices.Contains(ids, "") {
		out = append([]string{""}, out...)
	}
	return out
}
