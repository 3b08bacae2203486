package prompts

import "slices"

// Environment is where a version can be active. Each environment of a
// prompt points at one of its versions, or at none.
type Environment string

// The environments.
const (
	Production Environment = "production"
	Staging    Environment = "staging"
)

// Environments lists every environment.
var Environments = []Environment{Production, Staging}

// Valid reports whether e is one of the environments.
func (e Environment) Valid() bool { return e == Production || e == Staging }

// Validate returns an invalid-input error for the field "environment"
// unless e is one of the environments.
func (e Environment) Validate() error {
	var fe fieldErrors
	e.check(&fe, "environment")
	return fe.err()
}

// check adds the environment rule's error for field when e breaks it, and
// reports whether e passed.
func (e Environment) check(fe *fieldErrors, field string) bool {
	if !e.Valid() {
		fe.add(field, "must be production or staging")
		return false
	}
	return true
}

// ActivePrompt is a prompt with the version active in one environment: what
// an application reads.
type ActivePrompt struct {
	Prompt
	Environment   Environment
	ActiveVersion *PromptVersion // nil when nothing is active
}

// Copy returns a with its own copies of what it points to (the
// description, the version, its change summary and variables), so that
// changing one changes nothing of the other: what a Store hands out. It
// makes one allocation for a version of up to 4 variables, two beyond.
func (a ActivePrompt) Copy() ActivePrompt {
	if a.Description == nil && a.ActiveVersion == nil {
		return a
	}
	blk := new(struct {
		v             PromptVersion
		desc, summary string
		vars          [4]string
	})
	if a.Description != nil {
		blk.desc = *a.Description
		a.Description = &blk.desc
	}
	if a.ActiveVersion != nil {
		blk.v = *a.ActiveVersion
		if blk.v.ChangeSummary != nil {
			blk.summary = *blk.v.ChangeSummary
			blk.v.ChangeSummary = &blk.summary
		}
		switch n := len(blk.v.Variables); {
		case blk.v.Variables == nil: // as it was
		case n <= len(blk.vars):
			blk.v.Variables = blk.vars[:copy(blk.vars[:], blk.v.Variables):n]
		default:
			blk.v.Variables = slices.Clone(blk.v.Variables)
		}
		if blk.v.Partials != nil {
			blk.v.Partials = slices.Clone(blk.v.Partials) // no allocation when empty
		}
		a.ActiveVersion = &blk.v
	}
	return a
}

// Activation is the input to Store.Activate: make one version of a prompt
// the active one in an environment. It names the version by id or by
// number, exactly one of the two (null counts as absent).
type Activation struct {
	PromptID      string
	Environment   Environment
	VersionID     Optional[string] // the version's id, or
	VersionNumber Optional[int]    // its number
	Change                         // who, why, and the revision expected
}

// Validate reports every field that breaks a rule, at once.
func (in Activation) Validate() error {
	var fe fieldErrors
	if in.PromptID == "" {
		fe.add("prompt_id", "is required")
	}
	in.Environment.check(&fe, "environment")
	hasID, hasNumber := in.VersionID.HasValue(), in.VersionNumber.HasValue()
	switch {
	case hasID && hasNumber:
		fe.add("version_id", "and version_number cannot both be given: give one")
	case !hasID && !hasNumber:
		fe.add("version_id", "or version_number is required")
	case hasID && in.VersionID.Value == "":
		fe.add("version_id", "must not be empty")
	case hasID:
		checkRef(&fe, "version_id", in.VersionID.Value, true)
	case in.VersionNumber.Value < 1:
		fe.add("version_number", "must be 1 or more")
	}
	in.Change.check(&fe)
	return fe.err()
}
