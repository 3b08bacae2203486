package mcp

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

var errClosed = errors.New("mcp: the handler is closed")

// ErrKeyEnded is Serve's error for a key that was revoked or expired
// before its session began.
var ErrKeyEnded = errors.New("mcp: the key is revoked or expired")

// viewKey names what a session sees: a key's access, in an environment.
type viewKey struct {
	access string // identity of the Access
	env    prompts.Environment
}

// identity is a text that two Access values share exactly when they are
// equal.
func identity(a httpapi.Access) string {
	var b strings.Builder
	b.WriteString(strconv.Quote(a.Name))
	b.WriteString(" " + a.Role.String())
	if a.KeyID != "" {
		b.WriteString(" key=" + a.KeyID)
	}
	if a.AllProjects {
		b.WriteString(" *")
	} else {
		ids := slices.Clone(a.ProjectIDs)
		slices.Sort(ids)
		for _, id := range slices.Compact(ids) {
			b.WriteString(" " + id)
		}
	}
	return b.String()
}

// view is what the sessions of one key in one environment share: an SDK
// server whose prompts are the prompts the key may see with a version
// active in the environment, kept as the store's by the tail. The SDK
// tells the view's sessions when its prompts change
// (notifications/prompts/list_changed).
type view struct {
	h      *Handler
	key    viewKey
	access httpapi.Access
	env    prompts.Environment
	server *sdk.Server

	ready chan struct{} // closed once the first sync is done
	err   error         // of the first sync; set before ready closes

	// Under h.mu: the sessions open, and the requests about to open one.
	sessions, pending int

	mu     sync.Mutex        // orders the syncs of listed
	listed map[string]listed // by prompt id: what the server lists now
	names  sync.RWMutex      // guards byName (written under mu too)
	byName map[string]string // the prompt ids of listed, by name
}

// listed is one prompt as the server lists it, and what is active: a
// promotion or a rollback that keeps the arguments is a change of the
// list too.
type listed struct {
	name, description string
	args              []argument
	version           string // the id of the version active
}

func (l listed) equal(o listed) bool {
	return l.name == o.name && l.description == o.description && slices.Equal(l.args, o.args) && l.version == o.version
}

// openView returns the view of a key in env, made and synced when it is
// the first, counted as pending: the caller decrements pending (under
// h.mu) once the session is open or failed, and calls closeView.
func (h *Handler) openView(ctx context.Context, a httpapi.Access, env prompts.Environment) (*view, error) {
	k := viewKey{access: identity(a), env: env}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errClosed
	}
	v := h.views[k]
	made := v == nil
	if made {
		v = h.newView(k, a, env)
		h.views[k] = v
		if h.tail == nil && h.events != nil {
			h.tail = h.startTail()
		}
	}
	t := h.tail
	v.pending++
	h.mu.Unlock()
	if made {
		if t != nil {
			<-t.started // bounded by the store's own timeouts
		}
		// The view is in h.views before its sync: a change the sync
		// misses reaches it through the tail.
		v.err = v.syncAll(ctx)
		close(v.ready)
	}
	select {
	case <-v.ready:
	case <-ctx.Done():
		h.dropPending(v)
		return nil, prompts.ContextDone(ctx.Err())
	}
	if v.err != nil {
		h.dropPending(v)
		return nil, v.err
	}
	return v, nil
}

func (h *Handler) dropPending(v *view) {
	h.mu.Lock()
	v.pending--
	h.mu.Unlock()
	h.closeView(v)
}

// closeView forgets v once it has no session and no request about to open
// one (or its first sync failed), and stops the tail with the last view.
func (h *Handler) closeView(v *view) {
	h.mu.Lock()
	var t *tail
	if v.sessions == 0 && v.pending == 0 && h.views[v.key] == v {
		delete(h.views, v.key)
		if len(h.views) == 0 && h.tail != nil {
			t, h.tail, h.revoked = h.tail, nil, nil
		}
	}
	h.mu.Unlock()
	if t != nil {
		t.stop()
	}
}

func (h *Handler) newView(k viewKey, a httpapi.Access, env prompts.Environment) *view {
	a.ProjectIDs = slices.Clone(a.ProjectIDs)
	v := &view{h: h, key: k, access: a, env: env, ready: make(chan struct{}), listed: make(map[string]listed), byName: make(map[string]string)}
	opts := &sdk.ServerOptions{
		Instructions: "The prompts of a prompt registry, as active in the " + string(env) + " environment, named PROJECT/KEY. " +
			"Tools read, render, create and activate versions, as the API key's role allows.",
		Logger:       h.log,
		SchemaCache:  h.schemas,
		GetSessionID: func() string { return h.newSessionID(v) },
		// What a session lists is its key's: no cache but its client's
		// may keep it.
		SetCacheable: func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) { c.CacheScope = "private" },
		Capabilities: &sdk.ServerCapabilities{
			Prompts: &sdk.PromptCapabilities{ListChanged: true},
			Tools:   &sdk.ToolCapabilities{},
		},
	}
	v.server = sdk.NewServer(&sdk.Implementation{Name: "prompts", Title: "Prompt registry", Version: "1"}, opts)
	v.addTools()
	return v
}

// visible returns the project ids a list is limited to: nil for every
// project, else a non-nil slice.
func visible(a httpapi.Access) []string {
	if a.AllProjects {
		return nil
	}
	if a.ProjectIDs == nil {
		return []string{}
	}
	return a.ProjectIDs
}

// syncAll lists every prompt the key may see and makes the server's
// prompts those with a version active in the environment.
func (v *view) syncAll(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	seen := make(map[string]bool)
	f := prompts.PromptFilter{ProjectIDs: visible(v.access), Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		page, more, err := v.h.store.ListPrompts(ctx, f)
		if err != nil {
			return err
		}
		for _, p := range page {
			seen[p.ID] = true
			if err := v.syncLocked(ctx, p.ID, false); err != nil {
				return err
			}
		}
		if !more || len(page) == 0 {
			break
		}
		f.After = page[len(page)-1].ID
	}
	for id := range v.listed {
		if !seen[id] {
			v.server.RemovePrompts(v.listed[id].name)
			v.setName(v.listed[id].name, "")
			delete(v.listed, id)
		}
	}
	return nil
}

// sync makes the server list the prompt with this id as the store has it
// now in the view's environment. With deployed (what is active there
// changed: a promotion, a rollback, a split), the sessions are told even
// when the listing looks the same.
func (v *view) sync(ctx context.Context, promptID string, deployed bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.syncLocked(ctx, promptID, deployed)
}

func (v *view) syncLocked(ctx context.Context, promptID string, deployed bool) error {
	ap, _, err := prompts.ReadActive(ctx, v.h.store, prompts.ActiveQuery{PromptID: promptID, Environment: v.env, Shared: true})
	var want listed
	show := false
	switch {
	case errors.Is(err, prompts.ErrNotFound), errors.Is(err, prompts.ErrInvalid):
		// Gone, or not of an environment of its project: not listed.
	case err != nil:
		return err
	case ap.ActiveVersion != nil && v.access.Allows(ap.ProjectID):
		slug, err := v.h.projects.slug(ctx, v.h.store, ap.ProjectID)
		if err != nil {
			return err
		}
		want, show = describe(slug, ap), true
	}
	had, ok := v.listed[promptID]
	switch {
	case !show && ok:
		delete(v.listed, promptID)
		v.setName(had.name, "")
		v.server.RemovePrompts(had.name)
	case show && (!ok || deployed || !had.equal(want)):
		if ok && had.name != want.name {
			v.server.RemovePrompts(had.name)
			v.setName(had.name, "")
		}
		v.listed[promptID] = want
		v.setName(want.name, promptID)
		v.server.AddPrompt(want.prompt(), v.getPrompt(promptID))
	}
	return nil
}

// lookup returns the id of the prompt listed with this name.
func (v *view) lookup(name string) (string, bool) {
	v.names.RLock()
	defer v.names.RUnlock()
	id, ok := v.byName[name]
	return id, ok
}

// setName lists the prompt with id under name, or none when id is "".
func (v *view) setName(name, id string) {
	v.names.Lock()
	defer v.names.Unlock()
	if id == "" {
		delete(v.byName, name)
	} else {
		v.byName[name] = id
	}
}

// projectCache keeps the slugs of projects, which never change.
type projectCache struct {
	mu    sync.Mutex
	slugs map[string]string // by id
}

const maxProjects = 10000

func (c *projectCache) slug(ctx context.Context, s prompts.Store, id string) (string, error) {
	c.mu.Lock()
	slug, ok := c.slugs[id]
	c.mu.Unlock()
	if ok {
		return slug, nil
	}
	p, err := s.GetProject(ctx, id)
	if err != nil {
		return "", err
	}
	c.put(p)
	return p.Slug, nil
}

func (c *projectCache) put(p prompts.Project) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slugs == nil || len(c.slugs) >= maxProjects {
		c.slugs = make(map[string]string)
	}
	c.slugs[p.ID] = p.Slug
}
