package memstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/promptkit/prompts"
)

// What each environment of a prompt points at: prompt.at, a version or a
// split (split.go); and the records of its changes, prompt.deployments,
// oldest first.

// GetActive implements prompts.Store.
func (s *Store) GetActive(ctx context.Context, promptID string, env prompts.Environment) (a prompts.ActivePrompt, err error) {
	err = s.readActive(ctx, &prompts.ActiveQuery{PromptID: promptID, Environment: env}, &a)
	return a.Copy(), err
}

// GetActiveByKey implements prompts.Store.
func (s *Store) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (a prompts.ActivePrompt, err error) {
	err = s.readActive(ctx, &prompts.ActiveQuery{ProjectID: projectID, Key: key, Environment: env}, &a)
	return a.Copy(), err
}

var _ prompts.ActiveReader = (*Store)(nil)

// ReadActive implements prompts.ActiveReader. With q.Shared the answer is
// the store's own, without a copy; Fresh and FailFast change nothing (the
// store is its own store of record, in memory). It is never stale. With
// q.Subject, a split's answer is picked for the subject.
//
// The answer is made where it is returned (readActive fills it): an
// ActivePrompt is 200 bytes, and each function that returns it by value
// copies it once more, on the hot path of every read.
func (s *Store) ReadActive(ctx context.Context, q prompts.ActiveQuery) (a prompts.ActivePrompt, stale bool, err error) {
	if q.Subject != "" {
		return s.readPicked(ctx, q)
	}
	if err = s.readActive(ctx, &q, &a); err == nil && !q.Shared {
		a = a.Copy()
	}
	return a, false, err
}

// readPicked is ReadActive with a subject; apart, so that a read without
// one pays nothing for it.
func (s *Store) readPicked(ctx context.Context, q prompts.ActiveQuery) (prompts.ActivePrompt, bool, error) {
	var a prompts.ActivePrompt
	err := s.readActive(ctx, &q, &a)
	if err != nil || q.Shared {
		return a.Pick(q.Subject), false, err
	}
	return a.Pick(q.Subject).Copy(), false, nil
}

// readActive sets *out, a zero ActivePrompt, to the answer to q, with
// what the store holds, shared; it leaves *out zero on an error.
func (s *Store) readActive(ctx context.Context, q *prompts.ActiveQuery, out *prompts.ActivePrompt) error {
	if err := s.rlock(ctx, q.Environment.Validate()); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	if q.PromptID != "" {
		rec, ok := s.prompts[q.PromptID]
		if !ok {
			return prompts.NotFound("prompt")
		}
		if _, err := s.environment(rec.p.ProjectID, q.Environment, "environment"); err != nil {
			return err
		}
		rec.share(q.Environment, out)
		return nil
	}
	if _, ok := s.projects[q.ProjectID]; !ok {
		return prompts.NotFound("project")
	}
	if _, err := s.environment(q.ProjectID, q.Environment, "environment"); err != nil {
		return err
	}
	id, ok := s.byKey[projectKey{q.ProjectID, q.Key}]
	if !ok {
		return prompts.NotFound("prompt")
	}
	s.prompts[id].share(q.Environment, out)
	return nil
}

// activeCopy returns the prompt with what is active in env, as a copy
// (prompts.ActivePrompt.Copy: one allocation for most versions).
func (rec *prompt) activeCopy(env prompts.Environment) prompts.ActivePrompt {
	return rec.shared(env).Copy()
}

// shared returns the prompt with what is active in env (a version, or a
// split with its first entry's version), sharing what it points to with
// the store: a version never changes once made, nor does a held split,
// and a change of the prompt's description replaces its string.
func (rec *prompt) shared(env prompts.Environment) prompts.ActivePrompt {
	var out prompts.ActivePrompt
	rec.share(env, &out)
	return out
}

// share sets *out, a zero ActivePrompt, to shared(env): made in place,
// not copied (see ReadActive).
func (rec *prompt) share(env prompts.Environment, out *prompts.ActivePrompt) {
	out.Prompt, out.Environment = rec.p, env
	if p := rec.at(env); p.split != nil {
		out.Split, out.SplitVersions, out.ActiveVersion = p.split.split, p.split.versions, &p.split.versions[0]
	} else if p.n != 0 {
		out.ActiveVersion = &rec.versions[p.n-1]
	}
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
		if err := s.changeable(rec, in.Environment, "environment", in.AllowProtected); err != nil {
			return prompts.ActivePrompt{}, err
		}
		to, err := rec.target(in) // existence before the precondition
		if err != nil {
			return prompts.ActivePrompt{}, err
		}
		if err := precondition(rec, in.Change); err != nil {
			return prompts.ActivePrompt{}, err
		}
		action := prompts.ActionActivate
		if to.split != nil {
			action = prompts.ActionSplit
			if rec.at(in.Environment).equal(to) {
				// The split held now: nothing changes, so nothing is
				// guarded (the guards compare what serves a subject now
				// with what would).
				return rec.activeCopy(in.Environment), nil
			}
		}
		if err := s.guards(rec, in.Environment, to, in.Change); err != nil {
			return prompts.ActivePrompt{}, err
		}
		now := s.clock.Now()
		if s.point(rec, in.Environment, to, action, in.Change, now) {
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
		rec, err := s.changing(in.PromptID, in.Environment, in.Change)
		if err != nil {
			return prompts.ActivePrompt{}, err
		}
		if !in.Force && rec.activeIn(in.Environment) != 0 {
			if by := s.includers(rec, in.Environment); len(by) > 0 {
				return prompts.ActivePrompt{}, prompts.PartialInUse(in.Environment, rec.p.Key, by)
			}
		}
		now := s.clock.Now()
		if s.point(rec, in.Environment, pointer{}, prompts.ActionDeactivate, in.Change, now) {
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
		rec, err := s.changing(in.PromptID, in.Environment, in.Change)
		if err != nil {
			return prompts.ActivePrompt{}, err
		}
		var to pointer // what env pointed at before its latest change
		for i := len(rec.deployments) - 1; i >= 0; i-- {
			if d := &rec.deployments[i]; d.Environment == in.Environment {
				switch {
				case d.PreviousSplit != nil:
					to = rec.hold(d.PreviousSplit)
				case d.PreviousVersionNumber != nil:
					to.n = *d.PreviousVersionNumber
				}
				break
			}
		}
		if to.n == 0 {
			return prompts.ActivePrompt{}, prompts.NothingToRollBack()
		}
		if err := s.guards(rec, in.Environment, to, in.Change); err != nil {
			return prompts.ActivePrompt{}, err
		}
		now := s.clock.Now()
		if s.point(rec, in.Environment, to, prompts.ActionRollback, in.Change, now) {
			rec.p.Revision = prompts.NextRevision(rec.p.Revision, now)
		}
		return rec.activeCopy(in.Environment), nil
	})
}

// changing returns the prompt a change of env is for, once env is one of
// its project's that the change may change, and the change's precondition
// holds. The caller holds the write lock.
func (s *Store) changing(promptID string, env prompts.Environment, c prompts.Change) (*prompt, error) {
	rec, ok := s.prompts[promptID]
	if !ok {
		return nil, prompts.NotFound("prompt")
	}
	if err := s.changeable(rec, env, "environment", c.AllowProtected); err != nil {
		return nil, err
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

// guards are the partials guard and the promotion guard of pointing env
// of rec at to, each unless c allows it. A version of to that env serves
// already (the one version, or an entry of the split held) passes the
// promotion guard: callers are sending its variables now. The caller
// holds the write lock.
func (s *Store) guards(rec *prompt, env prompts.Environment, to pointer, c prompts.Change) error {
	if err := s.partialGuard(rec, env, rec.partials(to), c.AllowMissingPartials); err != nil {
		return err
	}
	now := rec.at(env)
	for n := range to.numbers() {
		if now.serves(n) {
			continue
		}
		if err := rec.guard(env, rec.signature(n), c.AllowVariableChange); err != nil {
			return err
		}
	}
	return nil
}

// guard is the promotion guard: it refuses to point env at a version with
// this signature when a version active there now (the one version, or
// any of a split's) has other variables, or types or requires one of
// them otherwise, unless allowed.
func (rec *prompt) guard(env prompts.Environment, sig prompts.Signature, allow bool) error {
	if allow {
		return nil
	}
	for cur := range rec.at(env).numbers() {
		if c := prompts.DiffSignatures(rec.signature(cur), sig); c.Changed() {
			return prompts.VariablesChanged(c)
		}
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
		if !ok || s.prompts[id].activeIn(env) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return prompts.PartialUnavailable(env, missing)
	}
	return nil
}

// includers returns the keys, sorted, of the other prompts of rec's
// project of which a version active in env (the one version, or any of a
// split's) includes rec as a partial. The caller holds the lock.
func (s *Store) includers(rec *prompt, env prompts.Environment) []string {
	var by []string
	for _, id := range s.byProject[rec.p.ProjectID] {
		if id == rec.p.ID {
			continue
		}
		o := s.prompts[id]
		for n := range o.at(env).numbers() {
			if _, ok := slices.BinarySearch(o.versions[n-1].Partials, rec.p.Key); ok {
				by = append(by, o.p.Key)
				break
			}
		}
	}
	slices.Sort(by)
	return by
}

// point points env at to and records the change, unless env already
// points there. It reports whether anything changed; the caller then
// moves the revision on, once for all the environments one call changes.
func (rec *prompt) point(env prompts.Environment, to pointer, action prompts.Action, c prompts.Change, now time.Time) bool {
	prev := rec.at(env)
	if prev.equal(to) {
		return false
	}
	rec.setAt(env, to)
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
	d.VersionID, d.VersionNumber = rec.versionRef(to.n)
	d.PreviousVersionID, d.PreviousVersionNumber = rec.versionRef(prev.n)
	d.Split, d.PreviousSplit = to.splitOf(), prev.splitOf()
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
	if f.Environment != "" {
		if _, err := s.environment(rec.p.ProjectID, f.Environment, "environment"); err != nil {
			return nil, false, err
		}
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

// copyDeployment returns d with pointers and splits of its own.
func copyDeployment(d prompts.Deployment) prompts.Deployment {
	d.Split, d.PreviousSplit = d.Split.Clone(), d.PreviousSplit.Clone()
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
