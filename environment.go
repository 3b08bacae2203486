package prompts

import "slices"

// Environment is where a version can be active: the name of one of a
// project's environments. Each environment of a prompt points at one of
// its versions, or at none.
//
// Every project has the built-in environments Production and Staging, and
// the others an admin adds (Store.PutEnvironment). Validate checks a
// name's form only; whether it names one of the project's environments is
// checked by the Store, in the same atomic step as the read or the write
// that names it (an unknown one is UnknownEnvironment's ErrInvalid).
type Environment string

// The built-in environments, which every project has and none can remove.
const (
	Production Environment = "production"
	Staging    Environment = "staging"
)

// MaxEnvironment is the longest environment name, in bytes.
const MaxEnvironment = 32

// Environments lists the built-in environments, in their order: Production,
// Staging. A project's list (Store.ListEnvironments) starts with them.
var Environments = []Environment{Production, Staging}

// Builtin reports whether e is one of the built-in environments.
func (e Environment) Builtin() bool { return e == Production || e == Staging }

// Valid reports whether e is a well-formed environment name: 1 to 32
// lower-case ASCII letters, digits and '-', starting with a letter. It
// says nothing of whether a project has it.
func (e Environment) Valid() bool {
	if len(e) == 0 || len(e) > MaxEnvironment || e[0] < 'a' || e[0] > 'z' {
		return false
	}
	for i := 1; i < len(e); i++ {
		if c := e[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Validate returns an invalid-input error for the field "environment"
// unless e is a well-formed environment name (see Valid).
func (e Environment) Validate() error {
	var fe fieldErrors
	e.check(&fe, "environment")
	return fe.err()
}

// envRule is the message of a malformed environment name.
const envRule = "must be 1 to 32 lower-case ASCII letters, digits and '-', starting with a letter"

// check adds the environment rule's error for field when e breaks it, and
// reports whether e passed.
func (e Environment) check(fe *fieldErrors, field string) bool {
	if !e.Valid() {
		fe.add(field, envRule)
		return false
	}
	return true
}

// ActivePrompt is a prompt with the version active in one environment: what
// an application reads.
type ActivePrompt struct {
	Prompt
	Environment Environment
	// ActiveVersion is the version served: nil when nothing is active;
	// when the environment holds a split, its first entry's version, or
	// the one Pick chose for a subject.
	ActiveVersion *PromptVersion
	// Split is the environment's split when it holds one (nil when it
	// points at one version or none), and SplitVersions the versions of
	// its entries, in the same order: all a reader needs to pick the
	// version of any subject from memory (Pick).
	Split         Split
	SplitVersions []PromptVersion
}

// Pick returns a as it serves subject: with a split and a subject other
// than "", ActiveVersion is the version of the split's entry that owns
// the subject (Split.Entry); otherwise a as it is, the first entry's
// version for a split. The result shares what a points to; Pick allocates
// nothing.
func (a ActivePrompt) Pick(subject string) ActivePrompt {
	if subject == "" || len(a.Split) == 0 || len(a.SplitVersions) != len(a.Split) {
		return a
	}
	if i := a.Split.Entry(a.ID, a.Environment, subject); i >= 0 {
		a.ActiveVersion = &a.SplitVersions[i]
	}
	return a
}

// Copy returns a with its own copies of what it points to (the
// description, the version, its change summary and variables), so that
// changing one changes nothing of the other: what a Store hands out. It
// makes one allocation for a version of up to 4 variables, two beyond.
func (a ActivePrompt) Copy() ActivePrompt {
	if a.Description == nil && a.ActiveVersion == nil && a.Split == nil {
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
	if a.Split != nil {
		served := -1 // the entry whose version a serves, to serve it from the copies
		for i := range a.SplitVersions {
			if a.ActiveVersion != nil && a.SplitVersions[i].ID == a.ActiveVersion.ID {
				served = i
			}
		}
		a.Split = a.Split.Clone()
		vs := make([]PromptVersion, len(a.SplitVersions))
		for i, v := range a.SplitVersions {
			vs[i] = *ActivePrompt{ActiveVersion: &v}.Copy().ActiveVersion
		}
		a.SplitVersions = vs
		if served >= 0 {
			a.ActiveVersion = &a.SplitVersions[served]
		}
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
	VersionNumber Optional[int]    // its number, or
	// Split, when not nil, makes the environment hold a split of 2 to 10
	// different versions of the prompt (see Split), each entry naming its
	// version by id or by number. The partials guard applies to every
	// version of it, and the promotion guard to every version of it not
	// active in the environment already (see
	// Change.AllowVariableChange); the record's action is
	// ActionSplit. Setting the split the environment holds (the same
	// versions, weights and order) changes nothing.
	Split  Split
	Change // who, why, and the revision expected
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
	case in.Split != nil && (hasID || hasNumber):
		fe.add("split", "cannot be given with version_id or version_number: give one of the three")
	case in.Split != nil:
		in.Split.check(&fe)
	case hasID && hasNumber:
		fe.add("version_id", "and version_number cannot both be given: give one")
	case !hasID && !hasNumber:
		fe.add("version_id", "or version_number or split is required: give one of the three")
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
