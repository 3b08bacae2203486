package wire

import (
	"errors"
	"strconv"

	"github.com/promptkit/prompts"
)

// AppendEvent appends an event as the event log and webhooks send it: id
// (a decimal string), type, project_id, prompt_id (null for a project's
// event), created_at and data, the resource as its own read answers it: a
// project as the list of projects, a prompt as the list of prompts, a
// version with change_summary and variables, a deployment record as the
// history lists it. An event whose resource for its type is missing is an
// error, and b is returned as it was.
func AppendEvent(b []byte, e prompts.Event) ([]byte, error) {
	switch {
	case e.Type == prompts.EventProjectCreated && e.Project == nil,
		(e.Type == prompts.EventPromptCreated || e.Type == prompts.EventPromptUpdated) && e.Prompt == nil,
		e.Type == prompts.EventVersionCreated && e.Version == nil,
		e.Type == prompts.EventDeploymentCreated && e.Deployment == nil:
		return b, errors.New("wire: event " + strconv.FormatInt(e.ID, 10) + " of type " + string(e.Type) + " lacks its resource")
	case !e.Type.Valid():
		return b, errors.New("wire: event " + strconv.FormatInt(e.ID, 10) + " has an unknown type")
	}
	b = append(b, `{"id":"`...)
	b = strconv.AppendInt(b, e.ID, 10)
	b = append(b, `","type":`...)
	b = AppendString(b, string(e.Type))
	b = append(b, `,"project_id":`...)
	b = AppendString(b, e.ProjectID)
	b = append(b, `,"prompt_id":`...)
	b = appendID(b, e.PromptID)
	b = append(b, `,"created_at":`...)
	b = AppendTime(b, e.CreatedAt)
	b = append(b, `,"data":`...)
	switch e.Type {
	case prompts.EventProjectCreated:
		b = AppendProject(b, *e.Project)
	case prompts.EventPromptCreated, prompts.EventPromptUpdated:
		b = AppendPrompt(b, *e.Prompt)
	case prompts.EventVersionCreated:
		b = AppendVersionDetail(b, *e.Version)
	case prompts.EventDeploymentCreated:
		b = AppendDeployment(b, *e.Deployment)
	}
	return append(b, '}'), nil
}

// EncodeEvent returns AppendEvent's encoding of e.
func EncodeEvent(e prompts.Event) ([]byte, error) {
	return AppendEvent(nil, e)
}
