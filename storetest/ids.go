package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// known is what the not-found tests look things up next to: one project
// with one prompt with one version.
type known struct {
	project, prompt, version string
}

// idMethod is one Store method that takes an id, called with that id in
// place of a known one.
type idMethod struct {
	name string
	// kind is the known id the bad ids are made from and stand in for.
	kind func(k known) string
	// field is true when the id is a field of an input, where "" is a
	// missing required field, not an unknown id.
	field bool
	call  func(ctx context.Context, s prompts.Store, k known, id string) error
}

func projectID(k known) string { return k.project }
func promptID(k known) string  { return k.prompt }
func versionID(k known) string { return k.version }

var idMethods = []idMethod{
	{"GetProject", projectID, false, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.GetProject(ctx, id)
		return err
	}},
	{"CreatePrompt", projectID, true, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: id, Key: "new", Name: "New"})
		return err
	}},
	{"GetPrompt", promptID, false, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.GetPrompt(ctx, id)
		return err
	}},
	{"UpdatePrompt", promptID, false, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.UpdatePrompt(ctx, id, prompts.PromptUpdate{Name: prompts.Some("Renamed")})
		return err
	}},
	{"UpdatePrompt with the zero update", promptID, false, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.UpdatePrompt(ctx, id, prompts.PromptUpdate{})
		return err
	}},
	{"CreateVersion", promptID, true, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: id, Content: "c", Environments: prompts.Environments})
		return err
	}},
	{"GetVersion", promptID, false, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.GetVersion(ctx, id, 1)
		return err
	}},
	{"ListVersions", promptID, false, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, _, err := s.ListVersions(ctx, id, prompts.Page{})
		return err
	}},
	{"GetActive", promptID, false, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.GetActive(ctx, id, prompts.Production)
		return err
	}},
	{"GetActiveByKey", projectID, false, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.GetActiveByKey(ctx, id, "k", prompts.Production)
		return err
	}},
	{"Activate", promptID, true, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.Activate(ctx, prompts.Activation{PromptID: id, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
		return err
	}},
	{"Activate by version id", versionID, true, func(ctx context.Context, s prompts.Store, k known, id string) error {
		_, err := s.Activate(ctx, prompts.Activation{PromptID: k.prompt, Environment: prompts.Production, VersionID: prompts.Some(id)})
		return err
	}},
	{"Deactivate", promptID, true, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.Deactivate(ctx, prompts.Deactivation{PromptID: id, Environment: prompts.Staging})
		return err
	}},
	{"Rollback", promptID, true, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, err := s.Rollback(ctx, prompts.Rollback{PromptID: id, Environment: prompts.Staging})
		if errors.Is(err, prompts.ErrConflict) {
			return nil // found, with nothing to roll back to
		}
		return err
	}},
	{"ListDeployments", promptID, true, func(ctx context.Context, s prompts.Store, _ known, id string) error {
		_, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: id})
		return err
	}},
}

var idTests = func() []test {
	var tests []test
	for _, m := range idMethods {
		tests = append(tests, test{m.name + ": unknown and malformed ids are not found", func(t *testing.T, s *fixture) {
			is := is.New(t)
			ctx := t.Context()
			proj := s.project()
			p := s.prompt(proj.ID, "k")
			v := s.version(p.ID, "c", prompts.Production)
			k := known{proj.ID, p.ID, v.ID}
			is.NoErr(m.call(ctx, s, k, m.kind(k))) // the known id is found
			before := s.snapshot()
			real := m.kind(k)
			bad := append(malformedIDs(real), unknownID, pred(real), succ(real))
			for _, other := range []string{proj.ID, p.ID, v.ID} {
				if other != real {
					bad = append(bad, other) // an id of something else
				}
			}
			if !m.field {
				bad = append(bad, "")
			}
			for _, id := range bad {
				s.notFound(m.call(ctx, s, k, id), id) // an unknown or malformed id is not found
			}
			is.Equal(s.snapshot(), before) // nothing changed
		}})
	}
	return tests
}()
