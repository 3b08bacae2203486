package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// A Snapshot is every prompt of one project with the version active in
// each environment, as GET /v1/integration/projects/{project_id}/snapshot
// answers it (its JSON, with the format SnapshotFormat, is described in
// httpapi/openapi.yaml). A cache given one with WithFallback answers from
// it when the store is unavailable, so that an application that embeds a
// snapshot file starts and serves even when the store cannot be reached.
type Snapshot struct {
	Project prompts.Project
	TakenAt time.Time // when it was taken
	// Environments are the project's environments, in their order
	// (Store.ListEnvironments); each prompt holds every one of them. A
	// snapshot written before projects had environments of their own
	// holds the built-in ones.
	Environments []prompts.Environment
	Prompts      []SnapshotPrompt // oldest first
}

// SnapshotPrompt is one prompt of a Snapshot: the prompt as of one
// revision (Prompt.Revision), and the version active in each environment
// at that revision.
type SnapshotPrompt struct {
	Prompt prompts.Prompt
	// Active holds, for each environment, the version active there, or
	// nil when none is; for an environment that holds a split, its first
	// entry's.
	Active map[prompts.Environment]*prompts.PromptVersion
	// Splits holds, for each environment that holds a split, the split
	// and the versions of its entries; nil when none does.
	Splits map[prompts.Environment]SnapshotSplit
}

// SnapshotSplit is the split an environment of a SnapshotPrompt holds:
// the split (each entry with its version's id and number) and the
// versions of its entries, in the same order.
type SnapshotSplit struct {
	Split    prompts.Split
	Versions []prompts.PromptVersion
}

// ActiveIn returns the prompt with the version active in env, as
// Store.GetActive answers it: of a split, with the split and its
// versions, serving its first entry's.
func (p SnapshotPrompt) ActiveIn(env prompts.Environment) prompts.ActivePrompt {
	a := prompts.ActivePrompt{Prompt: p.Prompt, Environment: env, ActiveVersion: p.Active[env]}
	if sp, ok := p.Splits[env]; ok && len(sp.Versions) > 0 {
		a.Split, a.SplitVersions, a.ActiveVersion = sp.Split, sp.Versions, &sp.Versions[0]
	}
	return a
}

// SnapshotFormat names the format of a snapshot's JSON, its "format"
// member. A change that older readers could not read names a new one.
const SnapshotFormat = api.SnapshotFormat

// The bounds of a snapshot that TakeSnapshot takes: at most
// MaxSnapshotPrompts prompts, and at most MaxSnapshotSize bytes of their
// text (names, keys, descriptions, and the active versions' contents,
// change summaries and metadata).
const (
	MaxSnapshotPrompts = 10000
	MaxSnapshotSize    = 64 << 20
)

// ErrSnapshotTooLarge is the error of TakeSnapshot for a project past
// MaxSnapshotPrompts or MaxSnapshotSize; errors.Is tells it.
var ErrSnapshotTooLarge = errors.New("the project is too large for a snapshot")

// snapshotAttempts is how many times TakeSnapshot reads the environments
// of a prompt that changes between its reads of one and the other.
const snapshotAttempts = 5

// TakeSnapshot reads a snapshot of a project from store: every prompt of
// the project (ListPrompts, page by page) and the version active in each
// environment (GetActive), each prompt as of one revision. Give it the
// store itself rather than a cache over it: a cache that has not yet
// heard of a change may answer one environment from before it and the
// other from after. An unknown project is prompts.ErrNotFound; a project
// past the bounds is ErrSnapshotTooLarge, read no further.
func TakeSnapshot(ctx context.Context, store prompts.Store, projectID string) (*Snapshot, error) {
	project, err := store.GetProject(ctx, projectID)
	if err != nil {
		return nil, err
	}
	takenAt := time.Now().UTC().Truncate(time.Microsecond)
	var list []prompts.Prompt
	f := prompts.PromptFilter{ProjectIDs: []string{projectID}, Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		page, more, err := store.ListPrompts(ctx, f)
		if err != nil {
			return nil, err
		}
		list = append(list, page...)
		if len(list) > MaxSnapshotPrompts {
			return nil, fmt.Errorf("%w: it has more than %d prompts", ErrSnapshotTooLarge, MaxSnapshotPrompts)
		}
		if !more || len(page) == 0 {
			break
		}
		f.After = page[len(page)-1].ID
	}
	envs, err := store.ListEnvironments(ctx, projectID)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Project: project, TakenAt: takenAt, Environments: prompts.EnvironmentNames(envs), Prompts: make([]SnapshotPrompt, 0, len(list))}
	var size int64
	for _, p := range list {
		sp, err := snapshotPrompt(ctx, store, p.ID, s.Environments)
		if err != nil {
			return nil, err
		}
		if size += snapshotSize(sp); size > MaxSnapshotSize {
			return nil, fmt.Errorf("%w: its text passes %d bytes", ErrSnapshotTooLarge, MaxSnapshotSize)
		}
		s.Prompts = append(s.Prompts, sp)
	}
	return s, nil
}

// snapshotPrompt reads the prompt in envs until every read saw the same
// revision.
func snapshotPrompt(ctx context.Context, store prompts.Store, id string, envs []prompts.Environment) (SnapshotPrompt, error) {
	for range snapshotAttempts {
		sp := SnapshotPrompt{Active: make(map[prompts.Environment]*prompts.PromptVersion, len(envs))}
		same := true
		for i, env := range envs {
			a, err := store.GetActive(ctx, id, env)
			if err != nil {
				return SnapshotPrompt{}, err
			}
			if i == 0 {
				sp.Prompt = a.Prompt
			} else if a.Revision != sp.Prompt.Revision {
				same = false
			}
			sp.Active[env] = a.ActiveVersion
			if a.Split != nil {
				if sp.Splits == nil {
					sp.Splits = make(map[prompts.Environment]SnapshotSplit)
				}
				sp.Splits[env] = SnapshotSplit{Split: a.Split, Versions: a.SplitVersions}
			}
		}
		if same {
			return sp, nil
		}
	}
	return SnapshotPrompt{}, prompts.Unavailable(fmt.Errorf("cache: prompt %s changed during each of %d reads of its environments", id, snapshotAttempts))
}

// snapshotSize is the bytes of text of a prompt of a snapshot.
func snapshotSize(sp SnapshotPrompt) int64 {
	n := promptSize(sp.Prompt)
	for _, v := range sp.Active {
		if v != nil {
			n += versionSize(*v)
		}
	}
	for _, split := range sp.Splits {
		for _, v := range split.Versions[min(1, len(split.Versions)):] { // the first is in Active
			n += versionSize(v)
		}
	}
	return n
}

// MarshalJSON implements json.Marshaler: the snapshot as api.Snapshot
// has it, in SnapshotFormat, which ParseSnapshot reads back. It never
// fails.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	doc := api.Snapshot{Format: SnapshotFormat, TakenAt: s.TakenAt.UTC(), Project: api.FromProject(s.Project),
		Environments: s.environments(), Prompts: make([]api.SnapshotPrompt, len(s.Prompts))}
	for i, p := range s.Prompts {
		envs := make(map[prompts.Environment]*api.VersionDetail, len(doc.Environments))
		for _, env := range doc.Environments {
			envs[env] = nil
			if v := p.Active[env]; v != nil {
				d := api.FromVersionDetail(*v)
				envs[env] = &d
			}
		}
		doc.Prompts[i] = api.SnapshotPrompt{Prompt: api.FromPrompt(p.Prompt), Revision: p.Prompt.Revision, Environments: envs}
		for _, env := range doc.Environments {
			sp, ok := p.Splits[env]
			if !ok {
				continue
			}
			if doc.Prompts[i].Splits == nil {
				doc.Prompts[i].Splits = make(map[prompts.Environment][]api.SnapshotShare)
			}
			shares := make([]api.SnapshotShare, len(sp.Split))
			for j, e := range sp.Split {
				shares[j].Weight = e.Weight
				if j < len(sp.Versions) {
					shares[j].Version = api.FromVersionDetail(sp.Versions[j])
				}
			}
			doc.Prompts[i].Splits[env] = shares
		}
	}
	return api.Marshal(doc)
}

// environments returns the snapshot's environments: the built-in ones
// when it names none.
func (s Snapshot) environments() []prompts.Environment {
	if len(s.Environments) == 0 {
		return prompts.Environments
	}
	return s.Environments
}

// ParseSnapshot reads a snapshot's JSON, as MarshalJSON writes it and the
// HTTP interface sends it. It refuses anything else with an error naming
// the first problem and where it is (as in
// `prompts[3].environments.staging.content: missing`): a document that is
// not JSON, another format, a member missing or of the wrong type, a
// malformed id, a prompt of another project, a prompt or key given twice,
// a version of another prompt, an environment that is not one. Members
// it does not know are ignored.
func ParseSnapshot(data []byte) (*Snapshot, error) {
	var doc api.Snapshot
	if err := api.UnmarshalComplete(data, &doc); err != nil {
		var pe *api.PathError
		if errors.As(err, &pe) && pe.Path == "format" && pe.Problem == "missing" {
			return nil, snapshotError("format", "missing: not a snapshot")
		}
		return nil, snapshotError("", err.Error())
	}
	if doc.Format != SnapshotFormat {
		return nil, snapshotError("format", fmt.Sprintf("is %q; this version reads %q", doc.Format, SnapshotFormat))
	}
	if !prompts.ValidID(doc.Project.ID) {
		return nil, snapshotError("project.id", "is not an id")
	}
	project := doc.Project.Domain()
	s := &Snapshot{Project: project, TakenAt: doc.TakenAt.UTC().Truncate(time.Microsecond), Environments: doc.Environments, Prompts: make([]SnapshotPrompt, 0, len(doc.Prompts))}
	if err := checkEnvironments(s.Environments); err != nil {
		return nil, err
	}
	s.Environments = s.environments()
	ids, keys := make(map[string]bool), make(map[string]bool)
	for i, item := range doc.Prompts {
		at := "prompts[" + strconv.Itoa(i) + "]"
		sp, err := parseItem(item, at, project.ID, s.Environments)
		if err != nil {
			return nil, err
		}
		if ids[sp.Prompt.ID] {
			return nil, snapshotError(at+".prompt.id", "is given twice")
		}
		if keys[sp.Prompt.Key] {
			return nil, snapshotError(at+".prompt.key", "is given twice")
		}
		ids[sp.Prompt.ID], keys[sp.Prompt.Key] = true, true
		s.Prompts = append(s.Prompts, sp)
	}
	return s, nil
}

// UnmarshalJSON implements json.Unmarshaler with ParseSnapshot, so that a
// Snapshot inside another document reads (and refuses) the same.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	parsed, err := ParseSnapshot(data)
	if err != nil {
		return err
	}
	*s = *parsed
	return nil
}

// checkEnvironments checks a snapshot's list of environments: absent, or
// well-formed names, each once, the built-in ones first.
func checkEnvironments(envs []prompts.Environment) error {
	if len(envs) == 0 {
		return nil
	}
	seen := make(map[prompts.Environment]bool, len(envs))
	for i, env := range envs {
		at := "environments[" + strconv.Itoa(i) + "]"
		switch {
		case !env.Valid():
			return snapshotError(at, "is not an environment name")
		case seen[env]:
			return snapshotError(at, "is given twice")
		case i < len(prompts.Environments) && env != prompts.Environments[i]:
			return snapshotError(at, "must be "+string(prompts.Environments[i])+": the built-in environments come first")
		}
		seen[env] = true
	}
	if len(envs) < len(prompts.Environments) {
		return snapshotError("environments", "must hold the built-in environments, production and staging")
	}
	return nil
}

// parseItem checks one prompt of a snapshot, at, of the project
// projectID, in the environments envs, and returns it as the cache holds
// it.
func parseItem(item api.SnapshotPrompt, at, projectID string, envs []prompts.Environment) (SnapshotPrompt, error) {
	p, v := item.Prompt, item.Environments
	switch {
	case item.Revision < 1:
		return SnapshotPrompt{}, snapshotError(at+".revision", "must be a positive integer")
	case !prompts.ValidID(p.ID):
		return SnapshotPrompt{}, snapshotError(at+".prompt.id", "is not an id")
	case p.ProjectID != projectID:
		return SnapshotPrompt{}, snapshotError(at+".prompt.project_id", "is not the snapshot's project")
	case !prompts.ValidKey(p.Key):
		return SnapshotPrompt{}, snapshotError(at+".prompt.key", "is not a key")
	case p.LatestVersionID != nil && !prompts.ValidID(*p.LatestVersionID):
		return SnapshotPrompt{}, snapshotError(at+".prompt.latest_version_id", "is not an id")
	}
	for env := range v {
		if !slices.Contains(envs, env) {
			return SnapshotPrompt{}, snapshotError(at+".environments."+string(env), "is not an environment of the snapshot ("+joinEnvs(envs)+")")
		}
	}
	for env := range item.Splits {
		if !slices.Contains(envs, env) {
			return SnapshotPrompt{}, snapshotError(at+".splits."+string(env), "is not an environment of the snapshot ("+joinEnvs(envs)+")")
		}
	}
	sp := SnapshotPrompt{Prompt: p.Domain(), Active: make(map[prompts.Environment]*prompts.PromptVersion, len(envs))}
	sp.Prompt.CreatedAt = sp.Prompt.CreatedAt.Truncate(time.Microsecond)
	sp.Prompt.Revision = item.Revision
	for _, env := range envs {
		where := at + ".environments." + string(env)
		vd, ok := v[env]
		switch {
		case !ok:
			return SnapshotPrompt{}, snapshotError(where, "missing (null when no version is active)")
		case vd == nil: // null: none active
			sp.Active[env] = nil
			continue
		}
		version, err := parseVersion(*vd, where, p.ID)
		if err != nil {
			return SnapshotPrompt{}, err
		}
		sp.Active[env] = &version
	}
	for _, env := range envs {
		shares, ok := item.Splits[env]
		if !ok {
			continue
		}
		split, err := parseSplit(shares, at+".splits."+string(env), p.ID)
		if err != nil {
			return SnapshotPrompt{}, err
		}
		if first := sp.Active[env]; first == nil || first.ID != split.Versions[0].ID {
			return SnapshotPrompt{}, snapshotError(at+".splits."+string(env)+"[0].version", "is not the version of environments."+string(env)+": the first entry's version is the one served without a subject")
		}
		if sp.Splits == nil {
			sp.Splits = make(map[prompts.Environment]SnapshotSplit)
		}
		sp.Splits[env] = split
	}
	return sp, nil
}

// parseVersion checks a version of a snapshot, at where, of the prompt
// promptID, and returns it as the cache holds it.
func parseVersion(vd api.VersionDetail, where, promptID string) (prompts.PromptVersion, error) {
	switch {
	case !prompts.ValidID(vd.ID):
		return prompts.PromptVersion{}, snapshotError(where+".id", "is not an id")
	case vd.PromptID != promptID:
		return prompts.PromptVersion{}, snapshotError(where+".prompt_id", "is not the prompt's id")
	case vd.VersionNumber < 1:
		return prompts.PromptVersion{}, snapshotError(where+".version_number", "must be a positive integer")
	case vd.Content == "":
		return prompts.PromptVersion{}, snapshotError(where+".content", "must not be empty")
	case prompts.Metadata(vd.Metadata).Validate() != nil:
		return prompts.PromptVersion{}, snapshotError(where+".metadata_", "must be a JSON object or null")
	}
	version := vd.Domain()
	version.CreatedAt = version.CreatedAt.Truncate(time.Microsecond)
	return version, nil
}

// parseSplit checks the split of an environment of a snapshot, at where,
// of the prompt promptID: 2 to 10 entries, each a different version of
// the prompt with a weight of 1 to 10000.
func parseSplit(shares []api.SnapshotShare, where, promptID string) (SnapshotSplit, error) {
	if len(shares) < prompts.MinSplitVersions || len(shares) > prompts.MaxSplitVersions {
		return SnapshotSplit{}, snapshotError(where, "must have 2 to 10 entries")
	}
	out := SnapshotSplit{Split: make(prompts.Split, len(shares)), Versions: make([]prompts.PromptVersion, len(shares))}
	seen := make(map[string]bool, len(shares))
	for i, e := range shares {
		at := where + "[" + strconv.Itoa(i) + "]"
		if e.Weight < 1 || e.Weight > prompts.MaxSplitWeight {
			return SnapshotSplit{}, snapshotError(at+".weight", "must be 1 to 10000")
		}
		v, err := parseVersion(e.Version, at+".version", promptID)
		if err != nil {
			return SnapshotSplit{}, err
		}
		if seen[v.ID] {
			return SnapshotSplit{}, snapshotError(at+".version.id", "is the version of an entry before: each entry is a different version")
		}
		seen[v.ID] = true
		out.Split[i] = prompts.Share{VersionID: v.ID, VersionNumber: v.VersionNumber, Weight: e.Weight}
		out.Versions[i] = v
	}
	return out, nil
}

func joinEnvs(envs []prompts.Environment) string {
	var b strings.Builder
	for i, e := range envs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(e))
	}
	return b.String()
}

// snapshotError is the error of a malformed snapshot: at names the member
// (empty for the whole document).
func snapshotError(at, problem string) error {
	if at == "" {
		return errors.New("cache: malformed snapshot: " + problem)
	}
	return errors.New("cache: malformed snapshot: " + at + ": " + problem)
}
