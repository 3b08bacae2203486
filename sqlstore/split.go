package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/promptkit/prompts"
)

// Traffic splits (migration 0014): an environment's row holds the split
// in its column split, and its version_number is the first entry's; a
// deployment record holds the split after the change and the one before.
// A change that involves no split (a version after a version, or none)
// takes the statements it always took (qPointEnvironment,
// qClearEnvironment); one to or from a split takes hold's.

// splitEntry is an entry of a split as the columns hold it. Its fields are
// prompts.Share's, so that a conversion moves one to the other.
type splitEntry struct {
	VersionID     string `json:"version_id"`
	VersionNumber int    `json:"version_number"`
	Weight        int    `json:"weight"`
}

// splitArg is the argument of a split column: the split's JSON, or NULL
// for nil.
func splitArg(s prompts.Split) any {
	if s == nil {
		return nil
	}
	entries := make([]splitEntry, len(s))
	for i, e := range s {
		entries[i] = splitEntry(e)
	}
	b, _ := json.Marshal(entries) // cannot fail: strings and integers
	return string(b)
}

// decodeSplit reads a split column: nil for NULL.
func decodeSplit(b []byte) (prompts.Split, error) {
	if b == nil {
		return nil, nil
	}
	var entries []splitEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("sqlstore: a split column holds %q: %w", b, err)
	}
	s := make(prompts.Split, len(entries))
	for i, e := range entries {
		s[i] = prompts.Share(e)
	}
	return s, nil
}

// numbersOf returns the version numbers of the split's entries, in order.
func numbersOf(s prompts.Split) []int {
	out := make([]int, len(s))
	for i, e := range s {
		out[i] = e.VersionNumber
	}
	return out
}

// splitQueries are the statements a change of an environment may run when
// a split is involved, for begin to prepare.
var splitQueries = []query{qSplitVersions, qResolveVersions, qEnvironmentState, qHoldEnvironment}

// stmtFunc returns a prepared statement: Store.stmt, or tx.stmt within a
// transaction.
type stmtFunc func(context.Context, query) (*sqlx.Stmt, error)

// readSplit completes a, read by qGetActive or qGetActiveByKey, with the
// split raw (the row's column split) when it is not NULL: Split, the
// versions of its entries (qSplitVersions, with get), and ActiveVersion
// the first entry's.
func readSplit(ctx context.Context, get stmtFunc, a *prompts.ActivePrompt, raw []byte) error {
	split, err := decodeSplit(raw)
	if err != nil || split == nil {
		return err
	}
	st, err := get(ctx, qSplitVersions)
	if err != nil {
		return err
	}
	nums := make(pq.Int64Array, len(split))
	for i, e := range split {
		nums[i] = int64(e.VersionNumber)
	}
	rows, err := st.QueryContext(ctx, a.ID, nums)
	if err != nil {
		return err
	}
	defer rows.Close()
	byNumber := make(map[int]prompts.PromptVersion, len(split))
	for rows.Next() {
		var r versionRow
		if err := rows.Scan(r.dest()...); err != nil {
			return err
		}
		if v, ok := r.version(a.ID); ok {
			byNumber[v.VersionNumber] = v
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	a.Split, a.SplitVersions = split, make([]prompts.PromptVersion, len(split))
	for i, e := range split {
		v, ok := byNumber[e.VersionNumber]
		if !ok { // cannot happen: versions never go away
			return fmt.Errorf("sqlstore: the split of %s in %s names version %d, which is missing", a.ID, a.Environment, e.VersionNumber)
		}
		a.SplitVersions[i] = v
	}
	a.ActiveVersion = &a.SplitVersions[0]
	return nil
}

// resolved is a version a change points at, with what its guards compare.
type resolved struct {
	id       string
	number   int
	sig      prompts.Signature
	partials []string
}

// resolve finds the versions of the prompt that refs name, each by its id
// or else its number, in the order of refs, and refuses the first entry
// that names a version that is not the prompt's (ErrNotFound) or one an
// entry before it named (once by id, once by number: ErrInvalid on the
// field of the entry that names it again).
func resolve(ctx context.Context, tx *tx, promptID string, refs []prompts.Share) ([]resolved, error) {
	var (
		nums pq.Int64Array
		ids  pq.StringArray
	)
	for _, r := range refs {
		if r.VersionID != "" {
			if prompts.ValidID(r.VersionID) {
				ids = append(ids, r.VersionID)
			}
		} else if n := versionNumber(r.VersionNumber); n != 0 {
			nums = append(nums, int64(n))
		}
	}
	st, err := tx.stmt(ctx, qResolveVersions)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, promptID, nums, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []resolved
	for rows.Next() {
		var (
			v                        resolved
			variables, inputs, parts pq.StringArray
		)
		if err := rows.Scan(&v.id, &v.number, &variables, &inputs, &parts); err != nil {
			return nil, err
		}
		v.sig, v.partials = prompts.Signature{Variables: variables, Inputs: inputs}, parts
		found = append(found, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]resolved, len(refs))
	for i, r := range refs {
		j := slices.IndexFunc(found, func(v resolved) bool {
			return r.VersionID != "" && v.id == r.VersionID || r.VersionID == "" && v.number == r.VersionNumber
		})
		if j < 0 {
			return nil, prompts.NotFound("version")
		}
		out[i] = found[j]
		if before := slices.IndexFunc(out[:i], func(v resolved) bool { return v.id == out[i].id }); before >= 0 {
			field := "split[" + strconv.Itoa(i) + "].version_number"
			if r.VersionID != "" {
				field = "split[" + strconv.Itoa(i) + "].version_id"
			}
			return nil, prompts.Invalid(field, "names the version split["+strconv.Itoa(before)+"] names: each entry names a different version")
		}
	}
	return out, nil
}

// resolvedSplit returns the split of the versions vs with the weights of
// the entries of in, which name them in the same order.
func resolvedSplit(vs []resolved, in prompts.Split) prompts.Split {
	out := make(prompts.Split, len(vs))
	for i, v := range vs {
		out[i] = prompts.Share{VersionID: v.id, VersionNumber: v.number, Weight: in[i].Weight}
	}
	return out
}

// partialsOf returns the partials the versions vs include, sorted, each
// once.
func partialsOf(vs []resolved) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.partials...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hold points the environment at the versions vs, which the caller
// resolved: the one version of vs when split is nil, else the split
// split of them (vs in its order). It changes nothing when the
// environment points there already (the same split: the same versions,
// weights and order), or when the change's precondition does not hold
// (the caller answers it). Else it runs partials (the partials guard,
// when the caller has not run it already: nil), then the promotion guard
// compares each of vs that is not active there now with each version
// active there now (the one, or every entry of the split held), unless
// the change allows it (one active now passes: callers send its
// variables already); then hold
// records the change as action, with the state before (the version, or
// the split and its first entry), and its event.
func (c change) hold(ctx context.Context, tx *tx, vs []resolved, split prompts.Split, action prompts.Action, partials func() error) error {
	if !c.holds {
		return nil
	}
	st, err := tx.stmt(ctx, qEnvironmentState)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, c.promptID, string(c.env))
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		cur      int    // the version active now (the split's first entry's); 0: none
		curSplit []byte // the split held now, as stored
		sigs     = map[int]prompts.Signature{}
	)
	for rows.Next() {
		var (
			n                 int
			variables, inputs pq.StringArray
		)
		if err := rows.Scan(&cur, &curSplit, &n, &variables, &inputs); err != nil {
			return err
		}
		sigs[n] = prompts.Signature{Variables: variables, Inputs: inputs}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	held, err := decodeSplit(curSplit)
	if err != nil {
		return err
	}
	if split == nil && held == nil && cur == vs[0].number || split != nil && split.Equal(held) {
		return nil // there already: nothing to guard
	}
	if partials != nil {
		if err := partials(); err != nil {
			return err
		}
	}
	if !c.AllowVariableChange && cur != 0 {
		active := []int{cur}
		if held != nil {
			active = numbersOf(held)
		}
		for _, v := range vs {
			if slices.Contains(active, v.number) {
				continue // served there now: callers send its variables already
			}
			for _, n := range active {
				if d := prompts.DiffSignatures(sigs[n], v.sig); d.Changed() {
					return prompts.VariablesChanged(d)
				}
			}
		}
	}
	var previous any
	if cur != 0 {
		previous = cur
	}
	var previousSplit any
	if curSplit != nil {
		previousSplit = string(curSplit)
	}
	hold, err := tx.stmt(ctx, qHoldEnvironment)
	if err != nil {
		return err
	}
	var n int
	err = hold.QueryRowContext(ctx, c.promptID, string(c.env), vs[0].number, splitArg(split), c.now, c.recordID, string(action),
		previous, previousSplit, nullString(c.actor()), nullString(c.reason()), c.moveRevision, c.now.UnixMicro()).Scan(&n)
	if err != nil {
		return err
	}
	if n != 1 { // cannot happen: an upsert writes its row
		return errors.New("sqlstore: an environment's row was not written")
	}
	tx.emit(c.event())
	return nil
}
