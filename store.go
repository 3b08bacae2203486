package prompts

import "context"

// Store keeps projects, prompts, versions and what is active where. The
// doc comment of each method is its contract; storetest.Run checks it.
//
// Every method takes ctx first and stops when it is done. Every error is an
// *Error: ErrInvalid (with the invalid fields) when an input breaks a rule,
// checked before anything else so that a refused call changes nothing;
// ErrNotFound for an unknown id, key or number, and for an id that is not a
// well-formed ULID; ErrConflict when a write clashes with stored state;
// ErrUnavailable when the backing service cannot be reached (worth a retry);
// anything else is internal. When ctx ends before the work is done the
// error is ErrUnavailable and wraps ctx.Err(), so errors.Is(err,
// context.Canceled) holds. Returned values are copies: changing them
// changes nothing stored. Timestamps are UTC, truncated to microseconds.
//
// Every Prompt a method returns (ActivePrompt's included) carries the
// prompt's Revision as of that answer. A call that changes the prompt, adds
// a version or changes what an environment points at moves the revision on
// (NextRevision) in the same atomic step as the change; a call that
// changes nothing (an update to the values the prompt has, activating the
// version already active, deactivating where nothing is) leaves it as it
// is. So a prompt's revisions only grow, and two reads with the same
// revision saw the same prompt.
//
// Implementations are safe for concurrent use.
type Store interface {
	// CreateProject stores a new project and returns it. A slug already
	// used by another project is ErrConflict.
	CreateProject(ctx context.Context, in NewProject) (Project, error)
	// GetProject returns the project with this id, or ErrNotFound.
	GetProject(ctx context.Context, id string) (Project, error)
	// ListProjects returns one page of projects, oldest first, and whether
	// more follow.
	ListProjects(ctx context.Context, f ProjectFilter) (page []Project, more bool, err error)

	// CreatePrompt stores a new prompt with no versions. An unknown
	// project is ErrNotFound; a key the project already uses is
	// ErrConflict.
	CreatePrompt(ctx context.Context, in NewPrompt) (Prompt, error)
	// GetPrompt returns the prompt with this id, or ErrNotFound.
	GetPrompt(ctx context.Context, id string) (Prompt, error)
	// UpdatePrompt applies the update and returns the prompt as it now is.
	// An unknown prompt is ErrNotFound; a new key another prompt of the
	// project uses is ErrConflict. The zero update changes nothing and
	// returns the prompt.
	UpdatePrompt(ctx context.Context, id string, in PromptUpdate) (Prompt, error)
	// ListPrompts returns one page of prompts, oldest first, and whether
	// more follow. Filters that match nothing give an empty page, not an
	// error.
	ListPrompts(ctx context.Context, f PromptFilter) (page []Prompt, more bool, err error)

	// CreateVersion stores the next version of a prompt: number 1 first,
	// then the previous number plus one, with no gap and no duplicate
	// however many writers race. In the same atomic step it sets the
	// prompt's LatestVersionID and activates the version in
	// in.Environments. Version ids of a prompt increase with their
	// numbers. An unknown prompt is ErrNotFound.
	CreateVersion(ctx context.Context, in NewVersion) (PromptVersion, error)
	// GetVersion returns a prompt's version by number, or ErrNotFound when
	// the prompt or the number is unknown.
	GetVersion(ctx context.Context, promptID string, number int) (PromptVersion, error)
	// ListVersions returns one page of a prompt's versions, newest first
	// (After moves to older ones), and whether more follow. An unknown
	// prompt is ErrNotFound.
	ListVersions(ctx context.Context, promptID string, p Page) (page []PromptVersion, more bool, err error)

	// GetActive returns the prompt with the version active in env
	// (ActiveVersion nil when none is). When env holds a split, the answer
	// has the split and the versions of its entries (Split,
	// SplitVersions), and ActiveVersion is its first entry's. An unknown prompt is ErrNotFound;
	// an env that is malformed, or is not one of the prompt's project's
	// environments (UnknownEnvironment), is ErrInvalid. Every method that
	// takes an environment checks it so, in the same atomic step as its
	// read or write.
	GetActive(ctx context.Context, promptID string, env Environment) (ActivePrompt, error)
	// GetActiveByKey is GetActive for the prompt with this key in this
	// project: how an application refers to its prompts. An unknown
	// project or key is ErrNotFound.
	GetActiveByKey(ctx context.Context, projectID, key string, env Environment) (ActivePrompt, error)
	// Activate makes a version the active one in an environment, or
	// makes it hold a split (in.Split), and returns the prompt as
	// GetActive does for that environment. An unknown prompt, or a
	// version that is not one of this prompt's, is ErrNotFound; a split
	// that names one version twice (once by id, once by number) is
	// ErrInvalid. It writes a Deployment with ActionActivate (or
	// ActionSplit, carrying the split) unless the environment already
	// pointed at that version (or held that same split).
	Activate(ctx context.Context, in Activation) (ActivePrompt, error)
	// Deactivate points the environment at no version and returns the
	// prompt as GetActive does for it. It writes a Deployment with
	// ActionDeactivate unless nothing was active; an unknown prompt is
	// ErrNotFound.
	Deactivate(ctx context.Context, in Deactivation) (ActivePrompt, error)
	// Rollback points the environment back at the version it pointed at
	// before its latest change (that Deployment's previous version, or
	// previous split, which it holds again), writes
	// a Deployment with ActionRollback, and returns the prompt as GetActive
	// does for it. With no record, or when the latest change started from
	// no version, it is the conflict NothingToRollBack; an unknown prompt
	// is ErrNotFound.
	Rollback(ctx context.Context, in Rollback) (ActivePrompt, error)
	// ListDeployments returns one page of a prompt's deployment records,
	// newest first (After moves to older ones), and whether more follow.
	// An unknown prompt is ErrNotFound.
	ListDeployments(ctx context.Context, f DeploymentFilter) (page []Deployment, more bool, err error)

	// PutEnvironment adds the environment to the project, or, when the
	// project has it, sets whether it is protected; it returns the
	// environment as it now is. An unknown project is ErrNotFound.
	PutEnvironment(ctx context.Context, in NewEnvironment) (ProjectEnvironment, error)
	// ListEnvironments returns the project's environments, the built-in
	// ones first (Production, Staging), then the others oldest first. An
	// unknown project is ErrNotFound.
	ListEnvironments(ctx context.Context, projectID string) ([]ProjectEnvironment, error)
	// DeleteEnvironment removes an environment from the project. A
	// built-in environment (BuiltinEnvironment), or one that a version of
	// the project's prompts is active in (EnvironmentInUse), is
	// ErrConflict; an unknown project or environment is ErrNotFound. The
	// check and the removal are one atomic step with the changes of what
	// the environment points at: once it is removed, nothing is active in
	// it. Its deployment records stay.
	DeleteEnvironment(ctx context.Context, projectID string, name Environment) error
}
