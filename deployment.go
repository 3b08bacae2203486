package prompts

import "time"

// What each environment points at changes by deployments: an activation,
// a split, a deactivation or a rollback. Every change writes a Deployment record in
// the same atomic step; a call that changes nothing writes none. A change
// may carry the revision its caller expects (compare-and-swap), an actor
// and a reason.

// Action is what a deployment did.
type Action string

// The actions.
const (
	ActionActivate   Action = "activate"   // Activate, or a version created with environments
	ActionDeactivate Action = "deactivate" // Deactivate
	ActionRollback   Action = "rollback"   // Rollback
	ActionSplit      Action = "split"      // Activate with a Split
)

// MaxReason is the longest reason of a change, in Unicode code points.
const MaxReason = 1024

// Deployment is the record of one change of what an environment of a
// prompt points at. Records never change.
type Deployment struct {
	ID          string // ids of one prompt's records grow with time
	PromptID    string
	Environment Environment
	Action      Action
	// The version the environment points at after the change; nil after a
	// deactivation.
	VersionID     *string
	VersionNumber *int
	// The version it pointed at before; nil when it pointed at none.
	PreviousVersionID     *string
	PreviousVersionNumber *int
	// Split is the split the environment holds after the change (a split,
	// or a rollback to one), nil otherwise; VersionID and VersionNumber
	// are then its first entry's. PreviousSplit is the split it held
	// before, nil when it held none; PreviousVersionID and
	// PreviousVersionNumber are then its first entry's.
	Split         Split
	PreviousSplit Split
	Actor         *string // who asked; nil when the caller named no one
	Reason        *string // why; nil when none was given
	CreatedAt     time.Time
}

// Change is what every change of an environment carries besides its
// target: who makes it and why, for the record, and the revision the
// caller expects the prompt to be at.
type Change struct {
	// Actor names who makes the change (an API key's name, a user); ""
	// records none.
	Actor string
	// Reason says why, in up to MaxReason code points; "" records none.
	Reason string
	// IfRevision, when not 0, is the revision (Prompt.Revision) the prompt
	// must be at: if it is at another, the change is refused with
	// ErrPreconditionFailed and nothing changes. The check and the change
	// are one atomic step, so of several callers that expect the same
	// revision, at most one changes the environment.
	IfRevision int64
	// AllowVariableChange turns the promotion guard off for this change:
	// without it, activating a version whose Variables differ from those
	// of a version active in the environment now (the one version, or any
	// entry of the split it holds) is refused with ErrVariablesChanged
	// (VariablesChanged names the difference), in the same atomic step,
	// and changes nothing. A version the change points at that is active
	// there already passes: callers are sending its variables now. So
	// re-weighting or reordering the versions of the split held, or
	// activating one of its entries alone, needs no AllowVariableChange,
	// while a version new there is compared with each version active
	// there. With nothing active there, there is nothing to guard.
	AllowVariableChange bool
	// AllowProtected says that the caller may change what a protected
	// environment points at (an admin: httpapi sets it for admin keys).
	// Without it, such a change is refused with ProtectedEnvironment's
	// error (CodeForbidden), in the same atomic step, and changes nothing.
	AllowProtected bool
	// AllowMissingPartials turns the partials guard off for this change:
	// without it, activating a version that includes a partial ({{> KEY}})
	// with no version active in the environment is refused with
	// ErrPartialUnavailable (PartialUnavailable names them), in the same
	// atomic step, and changes nothing.
	AllowMissingPartials bool
}

// Validate reports every field that breaks a rule, at once. The inputs
// that embed a Change check it in their own Validate.
func (c Change) Validate() error {
	var fe fieldErrors
	c.check(&fe)
	return fe.err()
}

func (c Change) check(fe *fieldErrors) {
	checkText(fe, "actor", c.Actor, MaxName)
	checkText(fe, "reason", c.Reason, MaxReason)
	if c.IfRevision < 0 {
		fe.add("if_revision", "must not be negative")
	}
}

// Deactivation is the input to Store.Deactivate: point an environment of a
// prompt at no version.
type Deactivation struct {
	PromptID    string
	Environment Environment
	Change
	// Force deactivates even when a version active in the environment
	// includes the prompt as a partial; without it that is refused with
	// ErrPartialInUse (PartialInUse names the prompts that include it).
	Force bool
}

// Validate reports every field that breaks a rule, at once.
func (in Deactivation) Validate() error {
	var fe fieldErrors
	checkRef(&fe, "prompt_id", in.PromptID, true)
	in.Environment.check(&fe, "environment")
	in.Change.check(&fe)
	return fe.err()
}

// Rollback is the input to Store.Rollback: point an environment of a prompt
// back at the version it pointed at before its latest change. Rolling
// back twice returns to where it started.
type Rollback struct {
	PromptID    string
	Environment Environment
	Change
	// Idempotency, optional, makes a repeat of this rollback do nothing
	// new (a second rollback would undo the one before).
	Idempotency Idempotency
}

// Validate reports every field that breaks a rule, at once.
func (in Rollback) Validate() error {
	var fe fieldErrors
	checkRef(&fe, "prompt_id", in.PromptID, true)
	in.Environment.check(&fe, "environment")
	in.Change.check(&fe)
	in.Idempotency.check(&fe)
	return fe.err()
}

// DeploymentFilter selects a page of a prompt's deployment records, newest
// first.
type DeploymentFilter struct {
	PromptID string
	// Environment, when not "", limits the list to that environment's
	// records.
	Environment Environment
	Page
}

// Validate reports every field that breaks a rule, at once.
func (f DeploymentFilter) Validate() error {
	var fe fieldErrors
	checkRef(&fe, "prompt_id", f.PromptID, true)
	if f.Environment != "" {
		f.Environment.check(&fe, "environment")
	}
	f.Page.check(&fe)
	return fe.err()
}

// NothingToRollBack is the conflict error of a rollback with no earlier
// version to go back to: the environment has no record, or pointed at no
// version before its latest change.
//
// For Store authors (see "Writing a Store" in the package doc).
func NothingToRollBack() error {
	return Conflict("nothing to roll back to")
}

// PreconditionFailed is the error of a change whose Change.IfRevision is
// not the prompt's revision.
//
// For Store authors (see "Writing a Store" in the package doc).
func PreconditionFailed() error {
	return &Error{Code: CodePreconditionFailed, Message: "the prompt changed since the revision given"}
}
