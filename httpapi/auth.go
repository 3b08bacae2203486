package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/promptkit/prompts"
)

// ErrUnknownKey is what an Authenticator returns (or wraps) for a key it
// does not know. The handler answers it with 401, exactly as it answers a
// missing key.
var ErrUnknownKey = errors.New("httpapi: unknown API key")

// Authenticator maps the X-API-Key of a request to what that key may see.
// The embedding application implements it to keep keys where it likes;
// Keys is a ready implementation for a fixed set of keys.
//
// Authenticate is called once per request, before any other check, with a
// non-empty key. It returns an error for which errors.Is(err,
// ErrUnknownKey) holds when the key is unknown (401). Any other error is
// the authenticator's own failure: a *prompts.Error with
// prompts.CodeUnavailable answers 503 with Retry-After, anything else 500
// (logged; the body does not show it). Implementations must be safe for
// concurrent use and should compare keys in constant time.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (Access, error)
}

// Access is what one API key may do and see: its Role, and every project
// or the projects named. The resources of any other project are answered
// exactly as if they did not exist (404), and never appear in lists.
type Access struct {
	// Name names the key (or whoever holds it): the actor of the changes
	// it makes, in the deployment history. "" records none. It must be
	// valid UTF-8 without NUL, of at most prompts.MaxName characters: a
	// request whose Access has another is answered 500, the authenticator's
	// fault, not the client's.
	Name string
	// Role is what the key may do. The zero Role allows nothing: an
	// Authenticator must say what each key may do.
	Role        Role
	AllProjects bool     // every project, present and future
	ProjectIDs  []string // else only these (none when empty)
	// KeyID is the id of a key kept in the Store (StoreKeys), "" for a
	// key of the configuration: a kept key may be revoked, so that what
	// an Authenticator answered for it may not be remembered.
	KeyID string
	// ExpiresAt is when a kept key expires; zero: never. What the key
	// holds open (an event stream, an MCP session) ends then.
	ExpiresAt time.Time
}

// Role is what a key may do. Each role allows all that the one before it
// allows. A request its key's role does not allow is answered 403
// (forbidden, naming the role it needs) and changes nothing.
type Role int

// The roles, from the least to the most.
const (
	RoleRead   Role = iota + 1 // every GET (and HEAD)
	RoleWrite                  // also: create and update prompts, create versions that activate nothing
	RoleDeploy                 // also: activate, deactivate, roll back, create versions active in environments
	RoleAdmin                  // everything
)

var roleNames = [...]string{"", "read", "write", "deploy", "admin"}

// String returns the role's name in lower case: read, write, deploy or
// admin.
func (r Role) String() string {
	if r < RoleRead || r > RoleAdmin {
		return "none"
	}
	return roleNames[r]
}

// ParseRole returns the role with this name: read, write, deploy or admin.
func ParseRole(name string) (Role, error) {
	for r := RoleRead; r <= RoleAdmin; r++ {
		if roleNames[r] == name {
			return r, nil
		}
	}
	return 0, fmt.Errorf("httpapi: unknown role %q: want read, write, deploy or admin", name)
}

// allows reports whether a key of role r may do what needs role need.
func (r Role) allows(need Role) bool { return r >= need && r <= RoleAdmin }

// Allows reports whether the key may see the project with this id.
func (a Access) Allows(projectID string) bool {
	return a.AllProjects || (projectID != "" && slices.Contains(a.ProjectIDs, projectID))
}

// visible returns the project ids a list is limited to: nil for every
// project, else a non-nil slice (empty when the key sees none), as
// prompts.PromptFilter and prompts.ProjectFilter expect.
func (a Access) visible() []string {
	if a.AllProjects {
		return nil
	}
	if a.ProjectIDs == nil {
		return []string{}
	}
	return a.ProjectIDs
}

// authed returns next behind authentication: a missing, empty or unknown
// key, or two keys, is 401 before anything else is looked at.
func (h *Handler) authed(next handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, ok := h.authenticate(w, r)
		if ok {
			next(w, r, a)
		}
	}
}

func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (Access, bool) {
	keys := r.Header["X-Api-Key"]
	// Two keys are no key: which one would the request act as?
	if len(keys) != 1 || keys[0] == "" || h.auth == nil {
		h.unauthenticated(w)
		return Access{}, false
	}
	a, err := h.auth.Authenticate(r.Context(), keys[0])
	if err != nil {
		switch {
		case errors.Is(err, ErrUnknownKey):
			h.report(r, err)
			h.unauthenticated(w)
		case prompts.ErrorCode(err) == prompts.CodeUnavailable:
			h.storeError(w, r, err)
		default:
			// The authenticator failed: whatever its error says, the
			// request is not the client's fault.
			h.storeError(w, r, prompts.Internal(err))
		}
		return Access{}, false
	}
	return a, true
}

// permitted returns next behind the check of the key's role: a key whose
// role does not allow need is 403, before the request's body or anything
// else is looked at.
func (h *Handler) permitted(need Role, next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.allowed(w, r, a, need) {
			next(w, r, a)
		}
	}
}

// allowed reports whether a key with access a may make a request that
// needs role need; when it may not, it has answered the request.
func (h *Handler) allowed(w http.ResponseWriter, r *http.Request, a Access, need Role) bool {
	if !a.Role.allows(need) {
		h.forbidden(w, need)
		return false
	}
	if need > RoleRead {
		// The key's name is the actor of its changes, and the client
		// cannot change it: a bad one is the Authenticator's fault.
		if err := (prompts.Change{Actor: a.Name}).Validate(); err != nil {
			h.answer(w, r, prompts.Internal(fmt.Errorf("httpapi: the Authenticator gave the key a name that cannot be an actor: %w", err)))
			return false
		}
	}
	return true
}
