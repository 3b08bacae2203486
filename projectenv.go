package prompts

import (
	"strings"
	"time"
)

// A project's environments. Production and Staging exist in every project
// from its creation; an admin adds others (Store.PutEnvironment), protects
// them, and removes those that nothing is active in. Every read and write
// that names an environment accepts the project's environments and refuses
// any other name with UnknownEnvironment's error, which lists them.
//
// A protected environment is one whose pointers only an admin may change:
// a change of what it points at (Activate, Deactivate, Rollback, a version
// created with it in Environments) whose Change.AllowProtected (or
// NewVersion.AllowProtected) is false is refused with ProtectedEnvironment's
// error (CodeForbidden), in the same atomic step as the change, and changes
// nothing. Every environment starts unprotected, the built-in ones
// included. The Go API trusts its caller: set AllowProtected when the
// caller is an admin (httpapi and ui set it for admin keys only).

// ProjectEnvironment is one of a project's environments.
type ProjectEnvironment struct {
	Name Environment
	// Protected environments change only by a change that allows it
	// (Change.AllowProtected).
	Protected bool
	// CreatedAt is when it was added; for a built-in environment, when
	// its project was created.
	CreatedAt time.Time
}

// NewEnvironment is the input to Store.PutEnvironment: add an environment
// to a project, or change whether one is protected.
type NewEnvironment struct {
	ProjectID string
	Name      Environment
	Protected bool
	// Actor names who makes the change (httpapi: the key's name). No
	// Store keeps it (an environment has no history of its own, and its
	// events carry none); it is there for a wrapper that logs or traces
	// the change.
	Actor string
}

// Validate reports every field that breaks a rule, at once.
func (in NewEnvironment) Validate() error {
	var fe fieldErrors
	checkRef(&fe, "project_id", in.ProjectID, true)
	in.Name.check(&fe, "name")
	checkText(&fe, "actor", in.Actor, MaxName)
	return fe.err()
}

// EnvironmentNames returns the names of envs, in their order.
func EnvironmentNames(envs []ProjectEnvironment) []Environment {
	out := make([]Environment, len(envs))
	for i, e := range envs {
		out[i] = e.Name
	}
	return out
}

// UnknownEnvironment is the invalid-input error, for field (usually
// "environment"), of a name that is not one of the project's environments,
// whose names it lists.
//
// For Store authors (see "Writing a Store" in the package doc).
func UnknownEnvironment(field string, names []Environment) error {
	var b strings.Builder
	b.WriteString("is not an environment of this project: ")
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(n))
	}
	return Invalid(field, b.String())
}

// ProtectedEnvironment is the error of a change of what a protected
// environment points at, made without Change.AllowProtected: CodeForbidden,
// naming the role that may (admin).
//
// For Store authors (see "Writing a Store" in the package doc).
func ProtectedEnvironment(env Environment) error {
	return &Error{Code: CodeForbidden, Message: "the environment " + string(env) + " is protected: changing what it points at needs the role admin"}
}

// EnvironmentInUse is the conflict error of removing an environment that
// a version is active in.
//
// For Store authors (see "Writing a Store" in the package doc).
func EnvironmentInUse(env Environment) error {
	return Conflict("a version is active in the environment " + string(env) + ": deactivate it first")
}

// BuiltinEnvironment is the conflict error of removing a built-in
// environment.
//
// For Store authors (see "Writing a Store" in the package doc).
func BuiltinEnvironment(env Environment) error {
	return Conflict("the environment " + string(env) + " is built in and cannot be removed")
}

// BuiltinEnvironments returns the built-in environments of a project made
// at created, unprotected: what a Store that stores nothing for them
// until they change starts from.
func BuiltinEnvironments(created time.Time) []ProjectEnvironment {
	return []ProjectEnvironment{{Name: Production, CreatedAt: created}, {Name: Staging, CreatedAt: created}}
}
