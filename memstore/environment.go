package memstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/promptkit/prompts"
)

// What each environment of a prompt points at: prompt.active, by
// envIndex; and the records of its changes, prompt.deployments, oldest
// first.

func envIndex(e prompts.Environment) int {
	if e == prompts.Staging {
		return 1
	}
	return 0
}

// GetActive implements prompts.Store.
func (s *Store) GetActive(ctx context.Context, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	a, err := s.readActive(ctx, prompts.ActiveQuery{PromptID: promptID, Environment: env})
	return a.Copy(), err
}

// GetActiveByKey implements prompts.Store.
func (s *Store) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	a, err := s.readActive(ctx, prompts.ActiveQuery{ProjectID: projectID, Key: key, Environment: env})
	return a.Copy(), err
}

var _ prompts.ActiveReader = (*Store)(nil)

// ReadActive implements prompts.ActiveReader. With q.Shared the answer is
// the store's own, without a copy; Fresh and FailFast change nothing (the
// store is its own store of record, in memory). It is never stale.
func (s *Store) ReadActive(ctx context.Context, q prompts.ActiveQuery) (prompts.ActivePrompt, bool, error) {
	a, err := s.readActive(ctx, q)
	if err != nil || q.Shared {
		return a, false, err
	}
	return a.Copy(), false, nil
}

// readActive answers q with what the store holds, shared.
func (s *Store) readActive(ctx context.Context, q prompts.ActiveQuery) (prompts.ActivePrompt, error) {
	if err := s.rlock(ctx, q.Environment.Validate()); err != nil {
		return prompts.ActivePrompt{}, err
	}
	defer s.mu.RUnlock()
	if q.PromptID != "" {
		rec, ok := s.prompts[q.PromptID]
		if !ok {
			return prompts.ActivePrompt{}, prompts.NotFound("prompt")
		}
		return rec.shared(q.Environment), nil
	}
	id, ok := s.byKey[projectKey{q.ProjectID, q.Key}]
	if !ok {
		if _, ok := s.projects[q.ProjectID]; !ok {
			return prompts.ActivePrompt{}, prompts.NotFound("project")
		}
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	return s.prompts[id].shared(q.Environment), nil
}

// activeCopy returns the prompt with its version active in env, as a
// copy (prompts.ActivePrompt.Copy: one allocation for most versions).
func (rec *prompt) activeCopy(env prompts.Environment) prompts.ActivePrompt {
	return rec.shared(env).Copy()
}

// shared returns the prompt with its version active in env, sharing what
// it points to with the store: a version never changes once made, and a
// change of the prompt's description replaces its string.
func (rec *prompt) shared(env prompts.Environment) prompts.ActivePrompt {
	out := prompts.ActivePrompt{Prompt: rec.p, Environment: env}
	if n := rec.active[envIndex(env)]; n != 0 {
		out.ActiveVersion = &rec.versions[n-1]
	}
	return out
}

// Activate implements prompts.Store.
func (s *Store) Activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.ActivePrompt{}, err
	}
	return write(s, "", prompts.Idempotency{}, func() (prompts.ActivePrompt, error) {
		rec, ok := s.prompts[in.PromptID]
		if !ok {
			return prompts.ActivePrompt{}, prompts.NotFound("prompt")
		}
		n := rec.number(in)
		if n == 0 {
			return prompts.ActivePrompt{}, prompts.NotFound("version") // existence before the precondition
		}
		if err := precondition(rec, in.Change); err != nil {
			return prompts.ActivePrompt{}, err
		}
		if err := s.partialGuard(rec, in.Environment, rec.versions[n-1].Partials, in.AllowMissingPartials); err != nil {
			return prompts.ActivePrompt{}, err
		}
		if err := rec.guard(in.Environment, rec.signature(n), in.AllowVariableChange); err != nil {
			return prompts.ActivePrompt{}, err
		}
		now := s.clock.Now()
		if s.point(rec, in.Environment, n, prompts.ActionActivate, in.Change, now) {
			rec.p.Revision = prompts.NextRevision(rec.p.Revision, now)
		}
		return rec.activeCopy(in.Environment), nil
	})
}

// Deactivate implements prompts.Store.
func (s *Store) Deactivate(ctx context.Context, in prompts.Deactivation) (prompts.ActivePrompt, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.ActivePrompt{}, err
	}
	return write(s, "", prompts.Idempotency{}, func() (prompts.ActivePrompt, error) {
		rec, err := s.changing(in.PromptID, in.Change)
		if err != nil {
			return prompts.ActivePrompt{}, err
		}
		if !in.Force && rec.active[envIndex(in.Environment)] != 0 {
			if by := s.includers(rec, in.Environment); len(by) > 0 {
				return prompts.ActivePrompt{}, prompts.PartialInUse(in.Environment, rec.p.Key, by)
			}
		}
		now := s.clock.Now()
		if s.point(rec, in.Environment, 0, prompts.ActionDeactivate, in.Change, now) {
			rec.p.Revision = prompts.NextRevision(rec.p.Revision, now)
		}
		return rec.activeCopy(in.Environment), nil
	})
}

// Rollback implements prompts.Store.
func (s *Store) Rollback(ctx context.Context, in prompts.Rollback) (prompts.ActivePrompt, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.ActivePrompt{}, err
	}
	return write(s, opRollback, in.Idempotency, func() (prompts.ActivePrompt, error) {
		rec, err := s.changing(in.PromptID, in.Change)
		if err != nil {
			return prompts.ActivePrompt{}, err
		}
		n := 0 // the version before the environment's latest change
		for i := len(rec.deployments) - 1; i >= 0; i-- {
			if d := &rec.deployments[i]; d.Environment == in.Environment {
				if d.PreviousVersionNumber != nil {
					n = *d.PreviousVersionNumber
				}
				break
			}
		}
		if n == 0 {
			return prompts.ActivePrompt{}, prompts.NothingToRollBack()
		}
		if err := s.partialGuard(rec, in.Environment, rec.versions[n-1].Partials, in.AllowMissingPartials); err != nil {
			return prompts.ActivePrompt{}, err
		}
		if err := rec.guard(in.Environment, rec.signature(n), in.AllowVariableChange); err != nil {
			return prompts.ActivePrompt{}, err
		}
		now := s.clock.Now()
		if s.point(rec, in.Environment, n, prompts.ActionRollback, in.Change, now) {
			rec.p.Revision = prompts.NextRevision(rec.p.Revision, now)
		}
		return rec.activeCopy(in.Environment), nil
	})
}

// changing returns the prompt a change is for, once the change's
// precondition holds. The caller holds the write lock.
func (s *Store) changing(promptID string, c prompts.Change) (*prompt, error) {
	rec, ok := s.prompts[promptID]
	if !ok {
		return nil, prompts.NotFound("prompt")
	}
	return rec, precondition(rec, c)
}

// precondition returns ErrPreconditionFailed unless the prompt is at the
// revision the change expects.
func precondition(rec *prompt, c prompts.Change) error {
	if c.IfRevision != 0 && c.IfRevision != rec.p.Revision {
		return prompts.PreconditionFailed()
	}
	return nil
}

// guard is the promotion guard: it refuses to point env at a version with
// this signature when the version active there now has other variables,
// or types or requires one of them otherwise, unless allowed.
func (rec *prompt) guard(env prompts.Environment, sig prompts.Signature, allow bool) error {
	cur := rec.active[envIndex(env)]
	if allow || cur == 0 {
		return nil
	}
	if c := prompts.DiffSignatures(rec.signature(cur), sig); c.Changed() {
		return prompts.VariablesChanged(c)
	}
	return nil
}

// signature returns the signature of version number n.
func (rec *prompt) signature(n int) prompts.Signature {
	return prompts.Signature{Variables: rec.versions[n-1].Variables, Inputs: rec.inputs[n-1]}
}

// partialGuard is the partials guard: it refuses to point env of rec at
// a version that includes these partials when one of them names no
// prompt of the project with a version active in env, unless allowed.
// The caller holds the write lock.
func (s *Store) partialGuard(rec *prompt, env prompts.Environment, partials []string, allow bool) error {
	if allow {
		return nil
	}
	var missing []string
	for _, k := range partials {
		id, ok := s.byKey[projectKey{rec.p.ProjectID, k}]
		if !ok || s.prompts[id].active[envIndex(env)] == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return prompts.PartialUnavailable(env, missing)
	}
	return nil
}

// includers returns the keys, sorted, of the other prompts of rec's
// project whose version active in env includes rec as a partial. The
// caller holds the lock.
func (s *Store) includers(rec *prompt, env prompts.Environment) []string {
	var by []string
	for _, id := range s.byProject[rec.p.ProjectID] {
		o := s.prompts[id]
		n := o.active[envIndex(env)]
		if id == rec.p.ID || n == 0 {
			continue
		}
		if _, ok := slices.BinarySearch(o.versions[n-1].Partials, rec.p.Key); ok {
			by = append(by, o.p.Key)
		}
	}
	slices.Sort(by)
	return by
}

// number returns the number of the version that in names, 0 when the prompt
// has no such version.
func (rec *prompt) number(in prompts.Activation) int {
	if in.VersionID.HasValue() {
		for i := range rec.versions {
			if rec.versions[i].ID == in.VersionID.Value {
				return i + 1
			}
		}
		return 0
	}
	if n := in.VersionNumber.Value; n >= 1 && n <= len(rec.versions) {
		return n
	}
	return 0
}

// point points env at version number n (0 for none) and records the
// change, unless env already points there. It reports whether anything
// changed; the caller then moves the revision on, once for all the
// environments one call changes.
func (rec *prompt) point(env prompts.Environment, n int, action prompts.Action, c prompts.Change, now time.Time) bool {
	i := envIndex(env)
	prev := rec.active[i]
	if prev == n {
		return false
	}
	rec.active[i] = n
	last := ""
	if len(rec.deployments) > 0 {
		last = rec.deployments[len(rec.deployments)-1].ID
	}
	d := prompts.Deployment{
		ID:          prompts.NewIDAfter(now, last),
		PromptID:    rec.p.ID,
		Environment: env,
		Action:      action,
		Actor:       nonEmpty(c.Actor),
		Reason:      nonEmpty(c.Reason),
		CreatedAt:   now,
	}
	d.VersionID, d.VersionNumber = rec.versionRef(n)
	d.PreviousVersionID, d.PreviousVersionNumber = rec.versionRef(prev)
	rec.deployments = append(rec.deployments, d)
	return true
}

// versionRef returns the id and number of version n, nil for 0.
func (rec *prompt) versionRef(n int) (*string, *int) {
	if n == 0 {
		return nil, nil
	}
	id := rec.versions[n-1].ID
	return &id, &n
}

// nonEmpty returns nil for "", else a pointer to a copy of s.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ListDeployments implements prompts.Store.
func (s *Store) ListDeployments(ctx context.Context, f prompts.DeploymentFilter) ([]prompts.Deployment, bool, error) {
	if err := s.rlock(ctx, f.Validate()); err != nil {
		return nil, false, err
	}
	defer s.mu.RUnlock()
	rec, ok := s.prompts[f.PromptID]
	if !ok {
		return nil, false, prompts.NotFound("prompt")
	}
	// Newest first: walk down from the newest record older than After.
	// Record ids grow with time, so that is a binary search.
	end, _ := slices.BinarySearchFunc(rec.deployments, f.After, func(d prompts.Deployment, id string) int {
		return strings.Compare(d.ID, id)
	})
	if f.After == "" {
		end = len(rec.deployments)
	}
	out := make([]prompts.Deployment, 0, min(end, f.Size()))
	for i := end - 1; i >= 0; i-- {
		d := rec.deployments[i]
		if f.Environment != "" && d.Environment != f.Environment {
			continue
		}
		if len(out) == f.Size() {
			return out, true, nil
		}
		out = append(out, copyDeployment(d))
	}
	return out, false, nil
}

// copyDeployment returns d with pointers of its own.
func copyDeployment(d prompts.Deployment) prompts.Deployment {
	d.VersionID, d.PreviousVersionID = copyString(d.VersionID), copyString(d.PreviousVersionID)
	d.Actor, d.Reason = copyString(d.Actor), copyString(d.Reason)
	if d.VersionNumber != nil {
		n := *d.VersionNumber
		d.VersionNumber = &n
	}
	if d.PreviousVersionNumber != nil {
		n := *d.PreviousVersionNumber
		d.PreviousVersionNumber = &n
	}
	return d
}
