package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/lib/pq"

	"github.com/promptkit/prompts"
)

// What each environment of a prompt points at: the table environments,
// one row per prompt and environment that has an active version (or
// holds a split, see split.go); and the records of its changes, the table
// deployments.

// activeRow receives the columns promptCols and versionCols, and the
// environment's split.
type activeRow struct {
	id, projectID, key, name, description, latest sql.NullString
	created                                       sql.NullTime
	revision                                      sql.NullInt64
	v                                             versionRow
	split                                         []byte
}

func (r *activeRow) dest() []any {
	return append(append([]any{&r.id, &r.projectID, &r.key, &r.name, &r.description, &r.latest, &r.created, &r.revision}, r.v.dest()...), &r.split)
}

// active returns the prompt with its version in env, or false when the
// prompt's columns were NULL.
func (r *activeRow) active(env prompts.Environment) (prompts.ActivePrompt, bool) {
	if !r.id.Valid {
		return prompts.ActivePrompt{}, false
	}
	a := prompts.ActivePrompt{
		Prompt: prompts.Prompt{
			ID:              r.id.String,
			ProjectID:       r.projectID.String,
			Key:             r.key.String,
			Name:            r.name.String,
			LatestVersionID: r.latest.String,
			CreatedAt:       r.created.Time.UTC(),
			Revision:        r.revision.Int64,
		},
		Environment: env,
	}
	if r.description.Valid {
		a.Description = &r.description.String
	}
	if v, ok := r.v.version(a.ID); ok {
		a.ActiveVersion = &v
	}
	return a, true
}

// GetActive implements prompts.Store. One statement joins the prompt, the
// environment's pointer and the version, so all three are read as of one
// moment; when the environment holds a split, a second reads the versions
// of its entries (which never change).
func (s *Store) GetActive(ctx context.Context, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	return bounded(ctx, func() (prompts.ActivePrompt, error) { return s.getActive(ctx, promptID, env) })
}

func (s *Store) getActive(ctx context.Context, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if err := env.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if !prompts.ValidID(promptID) {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	if err := s.knownForPrompt(ctx, promptID, env); err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	st, err := s.stmt(ctx, qGetActive)
	if err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	a, err := scanActive(ctx, s.stmt, st.QueryRowContext(ctx, promptID, string(env)), env)
	if err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	return a, nil
}

// scanActive scans the row of qGetActive, and reads the versions of the
// split the environment holds, if any, with get.
func scanActive(ctx context.Context, get stmtFunc, row *sql.Row, env prompts.Environment) (prompts.ActivePrompt, error) {
	var r activeRow
	err := row.Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	a, _ := r.active(env)
	if err := readSplit(ctx, get, &a, r.split); err != nil {
		return prompts.ActivePrompt{}, err
	}
	return a, nil
}

// GetActiveByKey implements prompts.Store. One statement reads it all, as
// for GetActive, and tells an unknown project from an unknown key.
func (s *Store) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	return bounded(ctx, func() (prompts.ActivePrompt, error) { return s.getActiveByKey(ctx, projectID, key, env) })
}

func (s *Store) getActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if err := env.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if !prompts.ValidID(projectID) {
		return prompts.ActivePrompt{}, prompts.NotFound("project")
	}
	if err := s.knownForProject(ctx, projectID, env); err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	if !prompts.ValidKey(key) {
		// No prompt has it, but whether the project exists still decides
		// which is not found, as in every Store. The empty key finds no
		// prompt and, unlike a malformed one, is safe to send.
		key = ""
	}
	st, err := s.stmt(ctx, qGetActiveByKey)
	if err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	var r activeRow
	err = st.QueryRowContext(ctx, projectID, key, string(env)).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return prompts.ActivePrompt{}, prompts.NotFound("project")
	}
	if err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	a, ok := r.active(env)
	if !ok {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	if err := readSplit(ctx, s.stmt, &a, r.split); err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	return a, nil
}

// Activate implements prompts.Store. In one transaction it locks the
// prompt's row, points the environment at the version, or the split, and
// records the change with its event (unless it points there already), and
// reads the prompt as GetActive does. Changes of one prompt's
// environments, in any process, take turns on that lock, each seeing the
// one before it.
func (s *Store) Activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	a, err := bounded(ctx, func() (prompts.ActivePrompt, error) { return s.activate(ctx, in) })
	return woke(s, a, err)
}

func (s *Store) activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if !prompts.ValidID(in.PromptID) {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	if in.Split != nil {
		return s.activateSplit(ctx, in)
	}
	var number, id any // the version asked for: by number or, if well-formed, by id
	switch {
	case in.VersionNumber.HasValue():
		number = versionNumber(in.VersionNumber.Value)
	case prompts.ValidID(in.VersionID.Value):
		id = in.VersionID.Value
	}
	target := lockTarget{mode: "version", number: number, id: id, guard: !in.AllowMissingPartials}
	return s.changeEnvironment(ctx, nil, in.PromptID, in.Environment, in.Change, target, func(ctx context.Context, tx *tx, c change) error {
		if !c.targetFound {
			return prompts.NotFound("version") // existence before the precondition
		}
		if c.holds { // the precondition before the conflict
			if err := c.partialGuard(ctx, tx, c.targetPartials); err != nil {
				return err
			}
		}
		found, err := c.point(ctx, tx, number, id, prompts.ActionActivate)
		switch {
		case err != nil:
			return err
		case !found:
			return prompts.NotFound("version")
		}
		return c.precondition()
	}, qPointEnvironment, qMissingPartials)
}

// activateSplit is Activate with a split: the statements of hold, after
// the versions of the split are found (and their partials' prompts locked
// with the prompt, as for one version).
func (s *Store) activateSplit(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	var (
		nums pq.Int64Array
		ids  pq.StringArray
	)
	for _, e := range in.Split {
		if e.VersionID != "" {
			ids = append(ids, e.VersionID)
		} else {
			nums = append(nums, int64(e.VersionNumber))
		}
	}
	target := lockTarget{mode: "split", numbers: nums, ids: ids, guard: !in.AllowMissingPartials}
	return s.changeEnvironment(ctx, nil, in.PromptID, in.Environment, in.Change, target, func(ctx context.Context, tx *tx, c change) error {
		vs, err := resolve(ctx, tx, c.promptID, in.Split) // existence (and the same version twice) before the precondition
		if err != nil {
			return err
		}
		if err := c.precondition(); err != nil {
			return err
		}
		return c.hold(ctx, tx, vs, resolvedSplit(vs, in.Split), prompts.ActionSplit, func() error {
			return c.partialGuard(ctx, tx, partialsOf(vs)) // locked with the prompt
		})
	}, qMissingPartials)
}

// partialGuard is the partials guard of the change to versions with
// these partials: unless the change allows it, it refuses when one of
// them names no prompt of the project with a version active in the
// environment. The partials' prompts must be locked (as the first
// statement of the change locks them, with the prompt's, in the order of
// their ids), so that a deactivation of one of them, which takes the same
// lock, waits for the change or the change for it.
func (c change) partialGuard(ctx context.Context, tx *tx, partials []string) error {
	if c.AllowMissingPartials || len(partials) == 0 {
		return nil
	}
	st, err := tx.stmt(ctx, qMissingPartials)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, c.projectID, string(c.env), pq.StringArray(partials))
	if err != nil {
		return err
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return err
		}
		missing = append(missing, k)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(missing) > 0 {
		return prompts.PartialUnavailable(c.env, missing)
	}
	return nil
}

// subset reports whether every key of keys is in of, which is sorted.
func subset(keys, of []string) bool {
	for _, k := range keys {
		if _, ok := slices.BinarySearch(of, k); !ok {
			return false
		}
	}
	return true
}

// lockPartials locks the rows of the prompt and of the prompts of its
// project with these keys, in the order of their ids (qLockPartials).
func lockPartials(ctx context.Context, tx *tx, promptID string, keys []string) error {
	st, err := tx.stmt(ctx, qLockPartials)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, promptID, pq.StringArray(keys))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// Deactivate implements prompts.Store. In one transaction it locks the
// prompt's row (as Activate does), points env at no version and records
// the change with its event when it pointed at one (or held a split), and
// reads the prompt as GetActive does.
func (s *Store) Deactivate(ctx context.Context, in prompts.Deactivation) (prompts.ActivePrompt, error) {
	a, err := bounded(ctx, func() (prompts.ActivePrompt, error) { return s.deactivate(ctx, in) })
	return woke(s, a, err)
}

func (s *Store) deactivate(ctx context.Context, in prompts.Deactivation) (prompts.ActivePrompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if !prompts.ValidID(in.PromptID) {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	return s.changeEnvironment(ctx, nil, in.PromptID, in.Environment, in.Change, lockTarget{}, func(ctx context.Context, tx *tx, c change) error {
		if err := c.precondition(); err != nil {
			return err
		}
		st, err := tx.stmt(ctx, qClearEnvironment)
		if err != nil {
			return err
		}
		var (
			changed bool
			by      pq.StringArray // the prompts whose active version includes it
		)
		err = st.QueryRowContext(ctx, c.promptID, string(c.env), c.now.UnixMicro(), c.recordID,
			nullString(c.actor()), nullString(c.reason()), c.now, in.Force).Scan(&changed, &by)
		switch {
		case err != nil:
			return err
		case len(by) > 0: // nothing was written
			return prompts.PartialInUse(c.env, c.key, by)
		case changed:
			tx.emit(c.event())
		}
		return nil
	}, qClearEnvironment)
}

// Rollback implements prompts.Store. In one transaction it locks the
// prompt's row (as Activate does), finds the version (or the split) the
// environment pointed at before its latest change, points the environment
// at it and records the change with its event, and reads the prompt as
// GetActive does. When another change of the environment came while it
// waited for the lock, and what it goes back to includes partials it did
// not lock, it runs again.
func (s *Store) Rollback(ctx context.Context, in prompts.Rollback) (prompts.ActivePrompt, error) {
	a, err := bounded(ctx, func() (prompts.ActivePrompt, error) { return s.rollback(ctx, in) })
	return woke(s, a, err)
}

// errStaleTarget is the error of a rollback whose first statement, which
// read what the rollback goes back to as of when it began, locked the
// partials' prompts of another state than the one it found once it held
// the prompt's lock: another change of the environment committed while it
// waited. The rollback runs again, rather than take the locks it misses
// out of their order (which could wait in a cycle with a change of one of
// those prompts).
var errStaleTarget = errors.New("sqlstore: the rollback's target changed while it waited for the prompt's lock")

// staleTries is how many times a rollback runs while its target keeps
// changing under it (errStaleTarget) before it gives up, unavailable.
const staleTries = 8

func (s *Store) rollback(ctx context.Context, in prompts.Rollback) (prompts.ActivePrompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if !prompts.ValidID(in.PromptID) {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	for range staleTries {
		a, err := s.rollbackOnce(ctx, in)
		if !errors.Is(err, errStaleTarget) {
			return a, err
		}
	}
	return prompts.ActivePrompt{}, prompts.Unavailable(errStaleTarget)
}

// rollbackOnce is one run of Rollback's transaction.
func (s *Store) rollbackOnce(ctx context.Context, in prompts.Rollback) (prompts.ActivePrompt, error) {
	target := lockTarget{mode: "rollback", guard: !in.AllowMissingPartials}
	step := func(ctx context.Context, tx *tx, c change) error {
		if err := c.precondition(); err != nil { // the precondition before the conflict
			return err
		}
		st, err := tx.stmt(ctx, qRollbackTarget)
		if err != nil {
			return err
		}
		var (
			target   sql.NullInt64
			partials pq.StringArray
			raw      []byte // the split held then
		)
		err = st.QueryRowContext(ctx, c.promptID, string(c.env)).Scan(&target, &partials, &raw)
		if errors.Is(err, sql.ErrNoRows) || err == nil && !target.Valid {
			return prompts.NothingToRollBack()
		}
		if err != nil {
			return err
		}
		split, err := decodeSplit(raw)
		if err != nil {
			return err
		}
		var vs []resolved
		if split != nil {
			if vs, err = resolve(ctx, tx, c.promptID, split); err != nil {
				return err
			}
			partials = partialsOf(vs)
		}
		// Locked with the prompt, unless another change came between.
		if !c.AllowMissingPartials && !subset(partials, c.targetPartials) {
			return errStaleTarget
		}
		if err := c.partialGuard(ctx, tx, partials); err != nil {
			return err
		}
		if split != nil {
			return c.hold(ctx, tx, vs, resolvedSplit(vs, split), prompts.ActionRollback, nil)
		}
		_, err = c.point(ctx, tx, int(target.Int64), nil, prompts.ActionRollback)
		return err
	}
	if !in.Idempotency.IsZero() {
		return idempotent(ctx, s, opRollback, in.Idempotency, func(ctx context.Context, tx *tx) (prompts.ActivePrompt, error) {
			return s.changeEnvironment(ctx, tx, in.PromptID, in.Environment, in.Change, target, step)
		}, append(splitQueries, qRollbackTarget, qPointEnvironment, qLockEnvironments, qGetActive, qLockPartials, qMissingPartials)...)
	}
	return s.changeEnvironment(ctx, nil, in.PromptID, in.Environment, in.Change, target, step, qRollbackTarget, qPointEnvironment, qMissingPartials)
}

// change is a change of what an environment of a prompt points at, as
// changeEnvironment hands it to the step that makes it.
type change struct {
	promptID  string
	projectID string
	key       string // the prompt's
	// The version the change points at, as its first statement found it
	// (see lockTarget): whether it exists, and its partials.
	targetFound    bool
	targetPartials []string
	env            prompts.Environment
	prompts.Change
	now          time.Time
	recordID     string // the id of the change's deployment record
	moveRevision bool   // false when the transaction moved it on already
	holds        bool   // the change's precondition holds
}

// precondition returns ErrPreconditionFailed unless the change's
// precondition holds.
func (c change) precondition() error {
	if !c.holds {
		return prompts.PreconditionFailed()
	}
	return nil
}

// event is the event of the change's deployment record.
func (c change) event() pendingEvent {
	return pendingEvent{typ: prompts.EventDeploymentCreated, projectID: c.projectID, promptID: c.promptID, deploymentID: c.recordID, at: c.now}
}

func (c change) actor() *string  { return nonEmpty(c.Actor) }
func (c change) reason() *string { return nonEmpty(c.Reason) }

// point points the environment at the version with this number or id
// (one of them nil), unless it points there already, and records the
// change as action (and its event, for tx's commit), if the change's
// precondition holds and the promotion guard lets it. It reports whether the version exists; the caller answers
// that and the precondition, in the order of checks, before the guard's
// error, which point returns. When the environment holds a split, its
// statement changes nothing, and hold makes the change.
func (c change) point(ctx context.Context, tx *tx, number, id any, action prompts.Action) (found bool, err error) {
	st, err := tx.stmt(ctx, qPointEnvironment)
	if err != nil {
		return false, err
	}
	var (
		changed, refused, split     bool
		target, current             pq.StringArray
		targetInputs, currentInputs pq.StringArray
	)
	run := func(allow bool) error {
		return st.QueryRowContext(ctx, c.promptID, string(c.env), number, id, c.now.UnixMicro(), c.now,
			c.recordID, string(action), nullString(c.actor()), nullString(c.reason()), c.moveRevision, c.holds, allow).
			Scan(&found, &changed, &refused, &target, &current, &targetInputs, &currentInputs, &split)
	}
	err = run(c.AllowVariableChange)
	if err == nil && split {
		if !found || !c.holds {
			return found, nil
		}
		var ref prompts.Share // as the caller named it: a number (an int) or an id
		if id != nil {
			ref.VersionID = id.(string)
		} else {
			ref.VersionNumber = number.(int)
		}
		vs, err := resolve(ctx, tx, c.promptID, []prompts.Share{ref})
		if err != nil {
			return found, err
		}
		return found, c.hold(ctx, tx, vs, nil, action, nil) // the caller ran the partials guard
	}
	if err == nil && refused {
		// The guard refused: nothing was written. The statement compares
		// the signatures as they are stored; one stored by an earlier
		// release types the inputs without their whole schema, and
		// DiffSignatures says whether they really differ. When they do
		// not, the same statement, under the same lock, points anyway.
		diff := prompts.DiffSignatures(
			prompts.Signature{Variables: current, Inputs: currentInputs},
			prompts.Signature{Variables: target, Inputs: targetInputs})
		if diff.Changed() {
			return found, prompts.VariablesChanged(diff)
		}
		err = run(true)
	}
	if err == nil && changed {
		tx.emit(c.event())
	}
	return found, err
}

// changeEnvironment runs step, which changes what env of the prompt points
// at, in a transaction (tx, or one of its own when tx is nil) that first
// locks the prompt and reads, under that
// lock, whether the change's precondition holds (step answers it in the
// order of checks: after existence, before conflicts), and then answers
// as GetActive. uses are the statements step runs. target names the
// version the change points at, whose partials' prompts the first
// statement locks with the prompt (see lockTarget).
func (s *Store) changeEnvironment(ctx context.Context, tx *tx, promptID string, env prompts.Environment, ch prompts.Change,
	target lockTarget, step func(context.Context, *tx, change) error, uses ...query) (prompts.ActivePrompt, error) {
	own := tx == nil
	if own {
		var err error
		if tx, err = s.begin(ctx, append(append(uses, qLockEnvironments, qGetActive), splitQueries...)...); err != nil {
			return prompts.ActivePrompt{}, err
		}
		defer tx.Rollback() //nolint:errcheck // a no-op once committed
	}
	a, err := func() (prompts.ActivePrompt, error) {
		l, err := lockEnvironments(ctx, tx, promptID, env, target)
		if err != nil {
			return prompts.ActivePrompt{}, err
		}
		if err := checkEnvironment(ctx, tx, l.projectID, env, l.envs, "environment", ch.AllowProtected); err != nil {
			return prompts.ActivePrompt{}, err
		}
		revision, latest := l.revision, l.latestDeployment
		now := s.clock.Now()
		c := change{promptID: promptID, projectID: l.projectID, key: l.key, targetFound: l.found, targetPartials: l.partials, env: env, Change: ch, now: now, recordID: prompts.NewIDAfter(now, latest), moveRevision: true,
			holds: ch.IfRevision == 0 || ch.IfRevision == revision}
		if err := step(ctx, tx, c); err != nil {
			return prompts.ActivePrompt{}, err
		}
		st, err := tx.stmt(ctx, qGetActive)
		if err != nil {
			return prompts.ActivePrompt{}, err
		}
		return scanActive(ctx, tx.stmt, st.QueryRowContext(ctx, promptID, string(env)), env)
	}()
	if err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	if own {
		if err := tx.commit(ctx); err != nil {
			return prompts.ActivePrompt{}, s.fail(ctx, err)
		}
	}
	return a, nil
}

// lockTarget names the versions a change of an environment points at, for
// the partials guard: mode "version" (the one numbered number or with id
// id), "split" (those numbered numbers or with the ids ids), "rollback"
// (the one, or the split, the environment pointed at before its latest
// change) or "" (none, a deactivation). guard says to lock the rows of
// the prompts they include.
type lockTarget struct {
	mode         string
	number, id   any
	numbers, ids any // arrays, for "split"
	guard        bool
}

// locked is what lockEnvironments read under the lock.
type locked struct {
	revision                         int64
	latestDeployment, projectID, key string
	found                            bool     // a target version exists
	partials                         []string // the target versions' partials, sorted, each once
	envs                             []string // the row of the environment changed, as envRows has it
}

// lockEnvironments locks the prompt's row for the rest of tx, which
// serializes the changes of what its environments point at, with the
// rows of the prompts its target version includes (when target.guard),
// in the order of their ids, and returns the prompt's revision, latest
// deployment id, project and key, the target's partials, and the row of
// its project's environment env, locked FOR SHARE (envRows). An unknown
// prompt is ErrNotFound. What tx reads after it is what the writer it may
// have waited for committed.
func lockEnvironments(ctx context.Context, tx *tx, promptID string, env prompts.Environment, target lockTarget) (locked, error) {
	st, err := tx.stmt(ctx, qLockEnvironments)
	if err != nil {
		return locked{}, err
	}
	mode := target.mode
	if mode == "" {
		mode = "none"
	}
	rows, err := st.QueryContext(ctx, promptID, string(env), mode, target.number, target.id, target.guard, target.numbers, target.ids)
	if err != nil {
		return locked{}, err
	}
	defer rows.Close()
	var (
		l     locked
		found bool
	)
	for rows.Next() {
		var (
			id       string
			latest   sql.NullString
			partials pq.StringArray
			envs     pq.StringArray
			r        locked
		)
		if err := rows.Scan(&id, &r.revision, &latest, &r.projectID, &r.key, &r.found, &partials, &envs); err != nil {
			return locked{}, err
		}
		if id == promptID {
			r.latestDeployment, r.partials, r.envs = latest.String, partials, envs
			l, found = r, true
		}
	}
	if err := rows.Err(); err != nil {
		return locked{}, err
	}
	if !found {
		return locked{}, prompts.NotFound("prompt")
	}
	return l, nil
}

// nonEmpty returns nil for "", else a pointer to s.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ListDeployments implements prompts.Store. It reads the primary key
// (prompt_id, id), or the index (prompt_id, environment, id) for one
// environment, backwards from the page's position.
func (s *Store) ListDeployments(ctx context.Context, f prompts.DeploymentFilter) ([]prompts.Deployment, bool, error) {
	return boundedPage(ctx, func() ([]prompts.Deployment, bool, error) { return s.listDeployments(ctx, f) })
}

func (s *Store) listDeployments(ctx context.Context, f prompts.DeploymentFilter) ([]prompts.Deployment, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	if !prompts.ValidID(f.PromptID) {
		return nil, false, prompts.NotFound("prompt")
	}
	if f.Environment != "" {
		if err := s.knownForPrompt(ctx, f.PromptID, f.Environment); err != nil {
			return nil, false, s.fail(ctx, err)
		}
	}
	before := f.After
	if before == "" {
		before = afterAll
	}
	n := f.Size()
	q, args := qListDeployments, []any{f.PromptID, before, n + 1}
	if f.Environment != "" {
		q, args = qListDeploymentsByEnvironment, append(args, string(f.Environment))
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
	found := false
	out := make([]prompts.Deployment, 0, min(n+1, 16))
	for rows.Next() {
		found = true
		var r deploymentRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, false, s.fail(ctx, err)
		}
		d, ok, err := r.deployment(f.PromptID)
		if err != nil {
			return nil, false, prompts.Internal(err)
		}
		if ok {
			out = append(out, d)
		} // else the prompt, without records on this page
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.fail(ctx, err)
	}
	if !found {
		return nil, false, prompts.NotFound("prompt")
	}
	if len(out) > n {
		return out[:n], true, nil
	}
	return out, false, nil
}

// deploymentRow receives the columns deploymentCols, which an outer join
// may leave NULL.
type deploymentRow struct {
	id, env, action, vid, pvid, actor, reason sql.NullString
	number, previous                          sql.NullInt64
	split, previousSplit                      []byte
	created                                   sql.NullTime
}

func (r *deploymentRow) dest() []any {
	return []any{&r.id, &r.env, &r.action, &r.vid, &r.number, &r.pvid, &r.previous, &r.split, &r.previousSplit, &r.actor, &r.reason, &r.created}
}

// deployment returns the record, or false when the columns were NULL.
func (r *deploymentRow) deployment(promptID string) (prompts.Deployment, bool, error) {
	if !r.id.Valid {
		return prompts.Deployment{}, false, nil
	}
	split, err := decodeSplit(r.split)
	if err != nil {
		return prompts.Deployment{}, false, err
	}
	previous, err := decodeSplit(r.previousSplit)
	if err != nil {
		return prompts.Deployment{}, false, err
	}
	return prompts.Deployment{
		ID:                    r.id.String,
		PromptID:              promptID,
		Environment:           prompts.Environment(r.env.String),
		Action:                prompts.Action(r.action.String),
		VersionID:             ptrString(r.vid),
		VersionNumber:         ptrInt(r.number),
		PreviousVersionID:     ptrString(r.pvid),
		PreviousVersionNumber: ptrInt(r.previous),
		Split:                 split,
		PreviousSplit:         previous,
		Actor:                 ptrString(r.actor),
		Reason:                ptrString(r.reason),
		CreatedAt:             r.created.Time.UTC(),
	}, true, nil
}

func ptrString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

func ptrInt(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	i := int(n.Int64)
	return &i
}
