package prompts

import (
	"context"
	"time"
)

// EventType names what an Event records.
type EventType string

// The types of events, one per kind of change.
const (
	EventProjectCreated    EventType = "project.created"
	EventPromptCreated     EventType = "prompt.created"
	EventPromptUpdated     EventType = "prompt.updated" // only when something changed
	EventVersionCreated    EventType = "version.created"
	EventDeploymentCreated EventType = "deployment.created" // one per Deployment record
	EventKeyCreated        EventType = "key.created"        // an APIKey, never its secret
	EventKeyRevoked        EventType = "key.revoked"

	// A project's environments (Store.PutEnvironment,
	// Store.DeleteEnvironment): one added; one whose protection changed
	// (a built-in one's included); one removed, as it was.
	EventEnvironmentCreated EventType = "environment.created"
	EventEnvironmentUpdated EventType = "environment.updated"
	EventEnvironmentDeleted EventType = "environment.deleted"
)

// EventTypes lists every EventType.
var EventTypes = []EventType{EventProjectCreated, EventPromptCreated, EventPromptUpdated, EventVersionCreated, EventDeploymentCreated, EventKeyCreated, EventKeyRevoked,
	EventEnvironmentCreated, EventEnvironmentUpdated, EventEnvironmentDeleted}

// Valid reports whether t is one of EventTypes.
func (t EventType) Valid() bool {
	for _, v := range EventTypes {
		if t == v {
			return true
		}
	}
	return false
}

// DefaultEventRetention is how long a Store keeps events unless told
// otherwise: removed afterwards during later writes, never on a goroutine
// of its own.
const DefaultEventRetention = 7 * 24 * time.Hour

// Event is one entry of the event log: one change, in the same atomic step
// as the change. A change that changes nothing appends nothing; a version
// created active in two environments appends three events, the version's
// first.
//
// Exactly one of Project, Prompt, Version, Deployment, Key and Environment
// is set, by Type: the resource as its own read answers it right after the
// change (a removed environment as it was). A key's event belongs to no
// project (ProjectID is empty): only readers of every project see it.
type Event struct {
	// ID is positive and increases in the order in which the changes
	// commit, without gaps that a reader could see later: a reader that
	// has seen ID n and asks for what follows gets every event committed
	// since, none skipped, whatever the number of writers and processes.
	// (Ids need not be consecutive.)
	ID        int64
	Type      EventType
	ProjectID string
	PromptID  string // "" for a project's event
	CreatedAt time.Time

	Project    *Project       // project.created
	Prompt     *Prompt        // prompt.created, prompt.updated
	Version    *PromptVersion // version.created
	Deployment *Deployment    // deployment.created
	Key        *APIKey        // key.created, key.revoked: never with a secret
	// environment.created, environment.updated, environment.deleted; the
	// event's PromptID is "".
	Environment *ProjectEnvironment
}

// EventFilter selects a page of the event log.
type EventFilter struct {
	// After is the id of the last event seen: the page starts after it.
	// 0 starts at the oldest event kept.
	After int64
	// ProjectIDs, when not nil, keeps the events of these projects only
	// (an empty, non-nil list keeps none); "" among them keeps the events
	// of no project, those of keys.
	ProjectIDs []string
	// Limit is 1 to MaxLimit; 0 means DefaultLimit.
	Limit int
}

// Validate reports an After below 0 or a Limit out of range.
func (f EventFilter) Validate() error {
	var fe fieldErrors
	if f.After < 0 {
		fe.add("after", "must be an event id (a positive integer), or 0 for the oldest kept")
	}
	if f.Limit < 0 || f.Limit > MaxLimit {
		fe.add("limit", "must be between 1 and 1000")
	}
	return fe.err()
}

// Size returns the number of events the page holds at most.
func (f EventFilter) Size() int {
	if f.Limit == 0 {
		return DefaultLimit
	}
	return f.Limit
}

// Keeps reports whether the filter keeps events of projectID.
func (f EventFilter) Keeps(projectID string) bool {
	if f.ProjectIDs == nil {
		return true
	}
	for _, id := range f.ProjectIDs {
		if id == projectID {
			return true
		}
	}
	return false
}

// EventLog is what a Store that keeps the log of its changes offers
// besides Store; memstore's and sqlstore's do. Find it with EventLogOf,
// which also finds it under a wrapper that passes it through (a cache).
type EventLog interface {
	// ListEvents returns one page of the events after f.After, oldest
	// first, and whether more follow. When events after f.After have been
	// removed already (f.After is older than the oldest event kept, less
	// one), it is ErrEventsExpired: the reader missed events for good.
	ListEvents(ctx context.Context, f EventFilter) (page []Event, more bool, err error)
	// WaitEvents returns when events after the id after may have been
	// appended (it may return early: the caller lists again), or with
	// ctx's error when ctx ends first.
	WaitEvents(ctx context.Context, after int64) error
	// LastEventID returns the id of the newest event (0 when there is
	// none), for a reader that starts with what comes next.
	LastEventID(ctx context.Context) (int64, error)
}
