package prompts

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/promptkit/prompts/internal/dotprompt"
)

// Partials are prompts. A dotprompt template includes another prompt of
// the same project with {{> KEY}} (or {{> KEY ctx}}, {{> KEY name=value}}):
// a render takes, for each, the version of the prompt with that key that
// is active in the environment rendered (a render by version number takes
// Production), recursively, at most MaxPartialDepth deep. A version
// records the keys it includes (PromptVersion.Partials), so that a Store
// can keep two guards in the atomic step of each change:
//
//   - activating a version whose partials have no version active in the
//     environment is ErrPartialUnavailable, unless
//     Change.AllowMissingPartials (NewVersion.AllowMissingPartials for
//     a version created with Environments);
//   - deactivating a prompt that a version active in that environment
//     includes is ErrPartialInUse, unless Deactivation.Force.
//
// A Renderer renders versions with their partials over any Store.

// MaxPartialDepth is how deeply partials may include partials: a chain of
// more than this many partials below the version rendered is refused.
const MaxPartialDepth = dotprompt.MaxPartialDepth

// TemplatePartials returns the keys of the prompts that content in format f
// includes as partials, sorted, each once, non-nil ([] for FormatPlain). A
// dotprompt template that does not parse, or that includes a partial
// whose name is not a well-formed prompt key (see ValidKey), is an
// invalid-input error for the field "content". Stores call it, with
// TemplateVariables, when they store a version.
func TemplatePartials(f TemplateFormat, content string) ([]string, error) {
	if f != FormatDotprompt {
		return []string{}, nil
	}
	t, err := parseTemplate(content)
	if err != nil {
		return nil, err
	}
	return partialKeys(t)
}

// partialKeys returns t's partials, or the invalid-input error of the
// first that is not a key.
func partialKeys(t *dotprompt.Template) ([]string, error) {
	ps := t.Partials()
	for _, p := range ps {
		if !ValidKey(p) {
			var fe fieldErrors
			fe.add("content", "includes the partial "+strconv.Quote(p)+", which is not a prompt key: a partial is the key of a prompt of the same project (1-128 ASCII letters, digits, '.', '_', '-' and '/', starting with a letter or digit)")
			return nil, fe.err()
		}
	}
	if ps == nil {
		ps = []string{}
	}
	return ps, nil
}

// PartialUnavailable is the error of an activation refused by the
// partials guard: the version includes the partials keys (sorted), which
// have no version active in env (or name no prompt of the project), and
// the caller did not allow it. Its message names them.
//
// For Store authors (see "Writing a Store" in the package doc).
func PartialUnavailable(env Environment, keys []string) error {
	noun := "the partial "
	if len(keys) > 1 {
		noun = "the partials "
	}
	return &Error{Code: CodePartialUnavailable, Message: noun + quoteAll(keys) +
		" of the version have no version active in " + string(env) + " (allow_missing_partials allows it)"}
}

// PartialInUse is the error of a deactivation refused because versions
// active in env include the prompt key as a partial: includedBy are the
// keys of their prompts (sorted), which the message names.
//
// For Store authors (see "Writing a Store" in the package doc).
func PartialInUse(env Environment, key string, includedBy []string) error {
	return &Error{Code: CodePartialInUse, Message: "the prompt " + strconv.Quote(key) + " is included as a partial by " +
		quoteAll(includedBy) + ", active in " + string(env) + " (force allows it)"}
}

func quoteAll(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	return strings.Join(q, ", ")
}

// partialError is the error of a partial a render cannot include.
func partialError(msg string) error {
	return &Error{Code: CodePartialUnavailable, Message: msg}
}

// chainError is the error of a chain of partials that cycles or nests
// too deeply; chain starts with the prompt rendered.
func chainError(what string, chain []string) error {
	return partialError(what + ": " + strings.Join(chain, " → "))
}

// renderPartialError turns the error of a render that met a partial it
// could not include (a Template rendered without a Renderer) into a
// partial-unavailable error naming the chain.
func renderPartialError(err error) error {
	var pe *dotprompt.PartialError
	if !errors.As(err, &pe) {
		return err
	}
	switch {
	case pe.Cycle:
		return chainError("the partials include each other", pe.Chain)
	case pe.Depth:
		return chainError("the partials nest more than "+strconv.Itoa(MaxPartialDepth)+" deep", pe.Chain)
	}
	return partialError("the partial " + strconv.Quote(pe.Chain[len(pe.Chain)-1]) + " is not available: a Renderer includes partials")
}

// partialSet is what a render includes: the partials' templates by key,
// and the names they read, so that a value for one of them is not unused.
type partialSet struct {
	templates map[string]*dotprompt.Template
	vars      []string // sorted, each once
	readsAll  bool
	resolve   dotprompt.PartialResolver // of templates
}

// reads reports whether a partial reads the input name.
func (ps *partialSet) reads(name string) bool {
	if ps == nil {
		return false
	}
	if ps.readsAll {
		return true
	}
	_, ok := slices.BinarySearch(ps.vars, name)
	return ok
}

// resolver is the set's dotprompt.PartialResolver; nil for no set.
func (ps *partialSet) resolver() dotprompt.PartialResolver {
	if ps == nil {
		return nil
	}
	return ps.resolve
}

// maxTemplates bounds a Renderer's cache of parsed templates: when full,
// it starts again.
const maxTemplates = 1024

// Renderer renders prompts' versions with their partials, over any Store.
// It parses each version once (versions never change), keeping up to 1,024
// parsed templates by version id, and reads which version of each partial
// is active at each render; while they are the versions a template's last
// render in that environment included, it includes them as it did then,
// without resolving them again. It is safe for concurrent use.
type Renderer struct {
	store Store
	mu    sync.Mutex
	cache map[string]*parsed
}

// parsed is a version's template, and what including it as a partial
// takes: a dotprompt template (for a plain version, one that renders its
// text and variables as the plain version does) and the keys it includes.
type parsed struct {
	t        *Template
	partials []string

	once sync.Once // a plain version's dp is made on its first inclusion
	dp   *dotprompt.Template

	// resolved are the partial sets of its last renders, one an
	// environment (at most maxResolved), each with the versions it was
	// resolved from; never changed once stored, replaced whole.
	resolved atomic.Pointer[[]*resolution]
}

// maxResolved is how many environments' partial sets a parsed template
// keeps.
const maxResolved = 8

// resolution is a partial set resolved for a template of the prompt key
// in project, in env: the versions read, in the order resolve read them,
// and the set they made.
type resolution struct {
	project, key string
	env          Environment
	reads        []partialRead
	set          *partialSet
}

// partialRead is one read of resolve: the partial key, included by by,
// and the id of the version that was active.
type partialRead struct {
	key, by   string
	versionID string
}

// included returns the template that includes p as a partial.
func (p *parsed) included() *dotprompt.Template {
	p.once.Do(func() {
		if p.dp == nil {
			p.dp = plainPartial(p.t.v.Content)
		}
	})
	return p.dp
}

// NewRenderer returns a Renderer that reads versions from s.
func NewRenderer(s Store) *Renderer { return &Renderer{store: s} }

// Render renders the version in asks for: the version active in
// in.Environment (Production when neither it nor a version number is
// given), or the version numbered in.VersionNumber. It returns the version
// (a copy of its own, or with in.Shared as the store answered it, which
// may share the store's values) and what it rendered (see
// Template.Render).
//
// Each {{> KEY}} of a dotprompt version includes the version of the prompt
// of the same project with that key that is active in the environment
// rendered (Production for a render by version number), recursively; a
// partial's variables count as the version's, so a value that only a
// partial reads is not unused. Every partial a version names is resolved
// before anything renders, even one in a branch the values do not take.
// A partial that is missing or has no version active there is
// ErrPartialUnavailable naming it; so is a chain of partials that comes
// back to a prompt already in it (the message names the chain, as
// "a → b → a"; a version that includes its own prompt's key is one) or
// that is more than MaxPartialDepth partials deep. MaxRenderSize bounds
// the output, partials included.
//
// Errors: those of in.Validate and of Template.Render; ErrNotFound for an
// unknown prompt or version number, or when nothing is active in the
// environment; the Store's errors.
func (r *Renderer) Render(ctx context.Context, in RenderRequest) (PromptVersion, Rendered, error) {
	if err := in.Validate(); err != nil {
		return PromptVersion{}, Rendered{}, err
	}
	v, env, project, key, err := r.version(ctx, in)
	if err != nil {
		return PromptVersion{}, Rendered{}, err
	}
	t, err := r.parse(v)
	if err != nil {
		return PromptVersion{}, Rendered{}, err
	}
	input := in.Input()
	if len(t.partials) > 0 {
		if project == "" { // a render by number: the prompt's project and key
			if project, key, err = r.promptKey(ctx, in.PromptID); err != nil {
				return PromptVersion{}, Rendered{}, err
			}
		}
		if input.partials, err = r.partialSet(ctx, t, project, key, env, in.Subject); err != nil {
			return PromptVersion{}, Rendered{}, err
		}
	}
	out, err := t.t.Render(ctx, input)
	if err != nil {
		return PromptVersion{}, Rendered{}, err
	}
	if in.Shared {
		return v, out, nil
	}
	return v.Copy(), out, nil
}

// version reads the version in asks for, and the environment its
// partials are read in; for a version read in an environment, its
// prompt's project and key. The read is apart from Render: a render's
// frames are on the stack of the server's goroutine, and the answer of
// ReadActive is large.
func (r *Renderer) version(ctx context.Context, in RenderRequest) (v PromptVersion, env Environment, project, key string, err error) {
	env = in.Target()
	if env == "" {
		v, err = r.store.GetVersion(ctx, in.PromptID, in.VersionNumber.Value)
		return v, Production, "", "", err
	}
	// Shared: the version is read, and copied only to be returned.
	a, _, err := ReadActive(ctx, r.store, ActiveQuery{PromptID: in.PromptID, Environment: env, Subject: in.Subject, Shared: true})
	if err != nil {
		return PromptVersion{}, "", "", "", err
	}
	if a.ActiveVersion == nil {
		return PromptVersion{}, "", "", "", &Error{Code: CodeNotFound, Message: "no version is active in " + string(env)}
	}
	return *a.ActiveVersion, env, a.ProjectID, a.Key, nil
}

// promptKey returns the project and the key of the prompt id (apart from
// Render, as version is).
func (r *Renderer) promptKey(ctx context.Context, id string) (project, key string, err error) {
	p, err := r.store.GetPrompt(ctx, id)
	return p.ProjectID, p.Key, err
}

// parse returns v's parsed template, parsing it on its first render.
func (r *Renderer) parse(v PromptVersion) (*parsed, error) {
	r.mu.Lock()
	p, ok := r.cache[v.ID]
	r.mu.Unlock()
	if ok {
		return p, nil
	}
	t, err := ParseTemplate(v) // outside the lock: it reads the whole content
	if err != nil {
		return nil, err
	}
	p = &parsed{t: t, dp: t.dp, partials: []string{}}
	if t.dp != nil {
		p.partials = t.dp.Partials()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cache == nil || len(r.cache) >= maxTemplates {
		r.cache = make(map[string]*parsed)
	}
	r.cache[v.ID] = p
	return p, nil
}

// plainPartial returns the dotprompt template that renders a plain
// version's content as PromptVersion.Render does: its {{variables}}
// replaced by their values, every other character as it is.
func plainPartial(content string) *dotprompt.Template {
	var parts []dotprompt.TextPart
	last := 0
	scanVariables(content, func(start, end int, name string) {
		if start > last {
			parts = append(parts, dotprompt.TextPart{Text: content[last:start]})
		}
		parts = append(parts, dotprompt.TextPart{Var: name})
		last = end
	})
	if last < len(content) {
		parts = append(parts, dotprompt.TextPart{Text: content[last:]})
	}
	return dotprompt.Text(parts)
}

// partialSet returns the partials root includes, as resolve does: it
// reads the version active in env of each partial its last render in env
// read, in the same order, and when they are the versions that render
// read, the set it resolved then (the same versions resolve the same
// way), else resolves them again. A render so reads each partial once, as
// resolve does, without building the set again.
func (r *Renderer) partialSet(ctx context.Context, root *parsed, project, rootKey string, env Environment, subject string) (*partialSet, error) {
	var last *resolution
	if all := root.resolved.Load(); all != nil {
		for _, res := range *all {
			if res.env == env && res.project == project && res.key == rootKey {
				last = res
				break
			}
		}
	}
	if last != nil {
		same := true
		for _, rd := range last.reads {
			v, err := r.activePartial(ctx, project, rd.key, rd.by, env, subject)
			if err != nil {
				// resolve would have read the same versions up to
				// here, and failed here.
				return nil, err
			}
			if v.ID != rd.versionID {
				same = false
				break
			}
		}
		if same {
			return last.set, nil
		}
	}
	res := &resolution{project: project, key: rootKey, env: env}
	set, err := r.resolve(ctx, root, project, rootKey, env, subject, &res.reads)
	if err != nil {
		return nil, err
	}
	res.set = set
	// Replace this environment's resolution, keeping the others.
	all := []*resolution{res}
	if old := root.resolved.Load(); old != nil {
		for _, o := range *old {
			if len(all) < maxResolved && (o.env != env || o.project != project || o.key != rootKey) {
				all = append(all, o)
			}
		}
	}
	root.resolved.Store(&all)
	return set, nil
}

// resolve reads, for the partials root includes and theirs in turn, the
// version active in env of the prompt of project with that key, parses
// it, and refuses a cycle or a chain deeper than MaxPartialDepth. Each
// key is read once a render, and the depth below it is remembered, so a
// wide graph costs its edges, not its paths. It appends each read to
// reads.
func (r *Renderer) resolve(ctx context.Context, root *parsed, project, rootKey string, env Environment, subject string, reads *[]partialRead) (*partialSet, error) {
	ps := &partialSet{templates: map[string]*dotprompt.Template{}}
	const (
		onPath = 1
		done   = 2
	)
	state := map[string]int{rootKey: onPath}
	depth := map[string]int{}      // done keys: the partials on the longest chain from it, itself included
	deepest := map[string]string{} // done keys: the next key on that chain
	longest := func(from string) []string {
		var chain []string
		for k := from; k != ""; k = deepest[k] {
			chain = append(chain, k)
		}
		return chain
	}
	var visit func(path []string, partials []string) (int, string, error)
	// visit resolves partials, included by the last key of path, and
	// returns the depth of the deepest chain below and its first key.
	visit = func(path []string, partials []string) (int, string, error) {
		best, bestKey := 0, ""
		for _, p := range partials {
			chain := append(slices.Clip(path), p)
			switch state[p] {
			case onPath:
				return 0, "", chainError("the partials include each other", chain)
			case done:
				if len(path)-1+depth[p] > MaxPartialDepth {
					return 0, "", chainError("the partials nest more than "+strconv.Itoa(MaxPartialDepth)+" deep",
						append(slices.Clip(path), longest(p)...)[:MaxPartialDepth+2])
				}
			default:
				if len(chain)-1 > MaxPartialDepth {
					return 0, "", chainError("the partials nest more than "+strconv.Itoa(MaxPartialDepth)+" deep", chain)
				}
				v, err := r.activePartial(ctx, project, p, path[len(path)-1], env, subject)
				if err != nil {
					return 0, "", err
				}
				*reads = append(*reads, partialRead{key: p, by: path[len(path)-1], versionID: v.ID})
				t, err := r.parse(*v)
				if err != nil {
					return 0, "", err
				}
				dp := t.included()
				ps.templates[p] = dp
				ps.vars = append(ps.vars, dp.Variables()...)
				ps.readsAll = ps.readsAll || dp.ReadsAll()
				state[p] = onPath
				d, next, err := visit(chain, t.partials)
				if err != nil {
					return 0, "", err
				}
				state[p], depth[p], deepest[p] = done, d+1, next
			}
			if depth[p] > best {
				best, bestKey = depth[p], p
			}
		}
		return best, bestKey, nil
	}
	if _, _, err := visit([]string{rootKey}, root.partials); err != nil {
		return nil, err
	}
	slices.Sort(ps.vars)
	ps.vars = slices.Compact(ps.vars)
	ps.resolve = dotprompt.PartialMap(ps.templates)
	return ps, nil
}

// activePartial returns the version of the prompt key active in env (for
// subject, when env holds a split of it), which by includes, as the store
// shares it: the caller changes nothing it points to.
func (r *Renderer) activePartial(ctx context.Context, project, key, by string, env Environment, subject string) (*PromptVersion, error) {
	a, _, err := ReadActive(ctx, r.store, ActiveQuery{ProjectID: project, Key: key, Environment: env, Shared: true, Subject: subject})
	switch {
	case ErrorCode(err) == CodeNotFound:
		return nil, partialError("the partial " + strconv.Quote(key) + " (included by " + strconv.Quote(by) + ") is not a prompt of the project")
	case err != nil:
		return nil, err
	case a.ActiveVersion == nil:
		return nil, partialError("the partial " + strconv.Quote(key) + " (included by " + strconv.Quote(by) + ") has no version active in " + string(env))
	}
	return a.ActiveVersion, nil
}
