package api

import (
	stdjson "encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/promptkit/prompts"
)

// Event is one change as the event stream and webhooks send it: id (a
// decimal string), type, project_id, prompt_id (null for a project's
// event), created_at and data, the resource as its own read answers it:
// a Project for project.created, a Prompt for prompt.created and
// prompt.updated, a VersionDetail for version.created, a Deployment for
// deployment.created, a Key (never with its secret) for key.created and
// key.revoked, whose project_id is "": a key's event belongs to no
// project; an Environment for environment.created, environment.updated
// and environment.deleted (as it was).
type Event struct {
	ID        string             `json:"id"`
	Type      prompts.EventType  `json:"type"`
	ProjectID string             `json:"project_id"`
	PromptID  *string            `json:"prompt_id"`
	CreatedAt time.Time          `json:"created_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
	Data      stdjson.RawMessage `json:"data"`
}

// FromEvent returns the JSON form of e. An event whose type is unknown,
// or whose resource for its type is missing, is an error.
func FromEvent(e prompts.Event) (Event, error) {
	var data any
	switch {
	case e.Type == prompts.EventProjectCreated && e.Project != nil:
		data = FromProject(*e.Project)
	case (e.Type == prompts.EventPromptCreated || e.Type == prompts.EventPromptUpdated) && e.Prompt != nil:
		data = FromPrompt(*e.Prompt)
	case e.Type == prompts.EventVersionCreated && e.Version != nil:
		data = FromVersionDetail(*e.Version)
	case e.Type == prompts.EventDeploymentCreated && e.Deployment != nil:
		data = FromDeployment(*e.Deployment)
	case (e.Type == prompts.EventEnvironmentCreated || e.Type == prompts.EventEnvironmentUpdated || e.Type == prompts.EventEnvironmentDeleted) && e.Environment != nil:
		data = FromEnvironment(*e.Environment)
	case (e.Type == prompts.EventKeyCreated || e.Type == prompts.EventKeyRevoked) && e.Key != nil:
		data = FromAPIKey(*e.Key)
	case !e.Type.Valid():
		return Event{}, errors.New("api: event " + strconv.FormatInt(e.ID, 10) + " has an unknown type")
	default:
		return Event{}, errors.New("api: event " + strconv.FormatInt(e.ID, 10) + " of type " + string(e.Type) + " lacks its resource")
	}
	b, err := Marshal(data)
	if err != nil {
		return Event{}, err
	}
	return Event{
		ID: eventID(e.ID), Type: e.Type, ProjectID: e.ProjectID, PromptID: idOrNull(e.PromptID),
		CreatedAt: utc(e.CreatedAt), Data: b,
	}, nil
}

// MarshalEvent returns the JSON of e as the stream and webhooks send it.
func MarshalEvent(e prompts.Event) ([]byte, error) {
	ev, err := FromEvent(e)
	if err != nil {
		return nil, err
	}
	return Marshal(ev)
}

// Domain returns e as package prompts has it, its Data decoded into the
// resource of its type. An id that is not a positive integer, or data
// that is not its type's resource, is an error. An event of a type this
// package does not know (of a later release) has no resource; members of
// data it does not know are ignored.
func (e Event) Domain() (prompts.Event, error) {
	id, err := strconv.ParseInt(e.ID, 10, 64)
	if err != nil || id < 1 {
		return prompts.Event{}, errors.New("api: event id " + strconv.Quote(e.ID) + " is not a positive integer")
	}
	out := prompts.Event{ID: id, Type: e.Type, ProjectID: e.ProjectID, PromptID: deref(e.PromptID), CreatedAt: utc(e.CreatedAt)}
	bad := func(err error) (prompts.Event, error) {
		return prompts.Event{}, errors.New("api: event " + e.ID + ": data: " + err.Error())
	}
	switch e.Type {
	case prompts.EventProjectCreated:
		var p Project
		if err := UnmarshalLenient(e.Data, &p); err != nil {
			return bad(err)
		}
		d := p.Domain()
		out.Project = &d
	case prompts.EventPromptCreated, prompts.EventPromptUpdated:
		var p Prompt
		if err := UnmarshalLenient(e.Data, &p); err != nil {
			return bad(err)
		}
		d := p.Domain()
		out.Prompt = &d
	case prompts.EventVersionCreated:
		var v VersionDetail
		if err := UnmarshalLenient(e.Data, &v); err != nil {
			return bad(err)
		}
		d := v.Domain()
		out.Version = &d
	case prompts.EventDeploymentCreated:
		var dep Deployment
		if err := UnmarshalLenient(e.Data, &dep); err != nil {
			return bad(err)
		}
		d := dep.Domain()
		out.Deployment = &d
	case prompts.EventEnvironmentCreated, prompts.EventEnvironmentUpdated, prompts.EventEnvironmentDeleted:
		var env Environment
		if err := UnmarshalLenient(e.Data, &env); err != nil {
			return bad(err)
		}
		d := env.Domain()
		out.Environment = &d
	case prompts.EventKeyCreated, prompts.EventKeyRevoked:
		var k Key
		if err := UnmarshalLenient(e.Data, &k); err != nil {
			return bad(err)
		}
		d := k.Domain()
		out.Key = &d
	}
	return out, nil
}

// AppendEvent appends the JSON of e, as MarshalEvent returns it, to b. On
// an error b is returned as it was.
func AppendEvent(b []byte, e prompts.Event) ([]byte, error) {
	ev, err := FromEvent(e)
	if err != nil {
		return b, err
	}
	return Append(b, ev)
}
