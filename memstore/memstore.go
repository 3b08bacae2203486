// Package memstore is the in-memory prompts.Store: the default for an
// embedded library and the one to use in unit tests.
//
// It is safe for concurrent use. Reads share a read lock and never wait for
// each other; writes take the lock exclusively for the few map and slice
// updates they make, after validation. Values are copied in and out, so no
// caller can change what is stored. Nothing is persisted: the data lives
// as long as the Store.
package memstore

import (
	"context"
	"slices"
	"sync"

	"github.com/promptkit/prompts"
)

var _ prompts.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock that stamps ids and timestamps (default
// time.Now).
func WithClock(c prompts.Clock) Option { return func(s *Store) { s.clock = c } }

// Store is the in-memory prompts.Store. Create it with New.
type Store struct {
	clock prompts.Clock

	mu           sync.RWMutex
	projects     map[string]*prompts.Project
	projectOrder []string            // project ids, sorted
	slugs        map[string]string   // slug -> project id
	prompts      map[string]*prompt  // prompt id -> prompt
	promptOrder  []string            // prompt ids, sorted
	byProject    map[string][]string // project id -> its prompt ids, sorted
	byKey        map[projectKey]string
}

type projectKey struct{ project, key string }

// prompt is the stored state of one prompt. Its Prompt's Description and
// its versions' ChangeSummary point at strings this package owns.
type prompt struct {
	p        prompts.Prompt
	versions []prompts.PromptVersion // versions[n-1] is number n
	active   [2]int                  // by environment: the active version's number, 0 for none
}

// New returns an empty Store.
func New(opts ...Option) *Store {
	s := &Store{
		projects:  make(map[string]*prompts.Project),
		slugs:     make(map[string]string),
		prompts:   make(map[string]*prompt),
		byProject: make(map[string][]string),
		byKey:     make(map[projectKey]string),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func envIndex(e prompts.Environment) int {
	if e == prompts.Staging {
		return 1
	}
	return 0
}

func checkEnv(e prompts.Environment) error {
	if !e.Valid() {
		return prompts.Invalid("environment", "must be production or staging")
	}
	return nil
}

func done(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return prompts.ContextDone(err)
	}
	return nil
}

// insertSorted inserts id into the sorted slice ids.
func insertSorted(ids []string, id string) []string {
	i, _ := slices.BinarySearch(ids, id)
	return slices.Insert(ids, i, id)
}

// CreateProject implements prompts.Store.
func (s *Store) CreateProject(ctx context.Context, in prompts.NewProject) (prompts.Project, error) {
	if err := in.Validate(); err != nil {
		return prompts.Project{}, err
	}
	if err := done(ctx); err != nil {
		return prompts.Project{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	slug := in.ProjectSlug()
	if _, taken := s.slugs[slug]; taken {
		return prompts.Project{}, prompts.Conflict("a project with slug " + slug + " exists")
	}
	now := s.clock.Now()
	p := &prompts.Project{
		ID:          prompts.NewID(now),
		Name:        in.Name,
		Slug:        slug,
		Description: in.Description,
		IsPrivate:   in.IsPrivate,
		CreatedAt:   now,
	}
	s.projects[p.ID] = p
	s.slugs[slug] = p.ID
	s.projectOrder = insertSorted(s.projectOrder, p.ID)
	return *p, nil
}

// GetProject implements prompts.Store.
func (s *Store) GetProject(ctx context.Context, id string) (prompts.Project, error) {
	if err := done(ctx); err != nil {
		return prompts.Project{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.projects[id]
	if !ok {
		return prompts.Project{}, prompts.NotFound("project")
	}
	return *p, nil
}

// ListProjects implements prompts.Store.
func (s *Store) ListProjects(ctx context.Context, f prompts.ProjectFilter) ([]prompts.Project, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	if err := done(ctx); err != nil {
		return nil, false, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := s.projectOrder
	if f.IDs != nil {
		ids = sortedKnown(f.IDs, func(id string) bool { _, ok := s.projects[id]; return ok })
	}
	page, more := pageAfter(ids, f.Page)
	out := make([]prompts.Project, len(page))
	for i, id := range page {
		out[i] = *s.projects[id]
	}
	return out, more, nil
}

// sortedKnown returns the ids that exist, sorted, without duplicates.
func sortedKnown(ids []string, exists func(string) bool) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if exists(id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// pageAfter returns the ids of sorted that follow p.After, at most
// p.Size() of them, and whether more follow.
func pageAfter(sorted []string, p prompts.Page) ([]string, bool) {
	start := 0
	if p.After != "" {
		start, _ = slices.BinarySearch(sorted, p.After)
		if start < len(sorted) && sorted[start] == p.After {
			start++
		}
	}
	rest := sorted[start:]
	if n := p.Size(); len(rest) > n {
		return rest[:n], true
	}
	return rest, false
}

// CreatePrompt implements prompts.Store.
func (s *Store) CreatePrompt(ctx context.Context, in prompts.NewPrompt) (prompts.Prompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.Prompt{}, err
	}
	if err := done(ctx); err != nil {
		return prompts.Prompt{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.projects[in.ProjectID]; !ok {
		return prompts.Prompt{}, prompts.NotFound("project")
	}
	k := projectKey{in.ProjectID, in.Key}
	if _, taken := s.byKey[k]; taken {
		return prompts.Prompt{}, keyTaken(in.Key)
	}
	now := s.clock.Now()
	rec := &prompt{p: prompts.Prompt{
		ID:          prompts.NewID(now),
		ProjectID:   in.ProjectID,
		Key:         in.Key,
		Name:        in.Name,
		Description: copyString(in.Description),
		CreatedAt:   now,
	}}
	id := rec.p.ID
	s.prompts[id] = rec
	s.byKey[k] = id
	s.promptOrder = insertSorted(s.promptOrder, id)
	s.byProject[in.ProjectID] = insertSorted(s.byProject[in.ProjectID], id)
	return rec.p.Copy(), nil
}

func keyTaken(key string) error {
	return prompts.Conflict("the project already has a prompt with key " + key)
}

func copyString(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

// GetPrompt implements prompts.Store.
func (s *Store) GetPrompt(ctx context.Context, id string) (prompts.Prompt, error) {
	if err := done(ctx); err != nil {
		return prompts.Prompt{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.prompts[id]
	if !ok {
		return prompts.Prompt{}, prompts.NotFound("prompt")
	}
	return rec.p.Copy(), nil
}

// UpdatePrompt implements prompts.Store.
func (s *Store) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (prompts.Prompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.Prompt{}, err
	}
	if err := done(ctx); err != nil {
		return prompts.Prompt{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.prompts[id]
	if !ok {
		return prompts.Prompt{}, prompts.NotFound("prompt")
	}
	old := projectKey{rec.p.ProjectID, rec.p.Key}
	next := in.Apply(rec.p) // Apply copies a new description
	if next.Key != rec.p.Key {
		k := projectKey{rec.p.ProjectID, next.Key}
		if _, taken := s.byKey[k]; taken {
			return prompts.Prompt{}, keyTaken(next.Key)
		}
		delete(s.byKey, old)
		s.byKey[k] = id
	}
	rec.p = next
	return rec.p.Copy(), nil
}

// ListPrompts implements prompts.Store.
func (s *Store) ListPrompts(ctx context.Context, f prompts.PromptFilter) ([]prompts.Prompt, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	if err := done(ctx); err != nil {
		return nil, false, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ids []string
	switch {
	case f.Key != "":
		ids = s.idsByKey(f)
	case f.ProjectIDs == nil:
		ids = s.promptOrder
	case len(f.ProjectIDs) == 1:
		ids = s.byProject[f.ProjectIDs[0]]
	default:
		var all []string
		for _, pid := range slices.Compact(slices.Sorted(slices.Values(f.ProjectIDs))) {
			all = append(all, s.byProject[pid]...)
		}
		slices.Sort(all)
		ids = all
	}
	page, more := pageAfter(ids, f.Page)
	out := make([]prompts.Prompt, len(page))
	for i, id := range page {
		out[i] = s.prompts[id].p.Copy()
	}
	return out, more, nil
}

// idsByKey returns the sorted ids of the prompts with f.Key in f's projects.
func (s *Store) idsByKey(f prompts.PromptFilter) []string {
	var ids []string
	if f.ProjectIDs != nil {
		for _, pid := range f.ProjectIDs {
			if id, ok := s.byKey[projectKey{pid, f.Key}]; ok {
				ids = append(ids, id)
			}
		}
	} else {
		for k, id := range s.byKey {
			if k.key == f.Key {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// CreateVersion implements prompts.Store.
func (s *Store) CreateVersion(ctx context.Context, in prompts.NewVersion) (prompts.PromptVersion, error) {
	if err := in.Validate(); err != nil {
		return prompts.PromptVersion{}, err
	}
	if err := done(ctx); err != nil {
		return prompts.PromptVersion{}, err
	}
	md := in.Metadata.Normalize()
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.prompts[in.PromptID]
	if !ok {
		return prompts.PromptVersion{}, prompts.NotFound("prompt")
	}
	now := s.clock.Now()
	v := prompts.PromptVersion{
		ID:            prompts.NewIDAfter(now, rec.p.LatestVersionID),
		PromptID:      rec.p.ID,
		VersionNumber: len(rec.versions) + 1,
		Content:       in.Content,
		ChangeSummary: copyString(in.ChangeSummary),
		Metadata:      md,
		CreatedAt:     now,
	}
	rec.versions = append(rec.versions, v)
	rec.p.LatestVersionID = v.ID
	for _, e := range in.Environments {
		rec.active[envIndex(e)] = v.VersionNumber
	}
	return v.Copy(), nil
}

// GetVersion implements prompts.Store.
func (s *Store) GetVersion(ctx context.Context, promptID string, number int) (prompts.PromptVersion, error) {
	if err := done(ctx); err != nil {
		return prompts.PromptVersion{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.prompts[promptID]
	if !ok {
		return prompts.PromptVersion{}, prompts.NotFound("prompt")
	}
	if number < 1 || number > len(rec.versions) {
		return prompts.PromptVersion{}, prompts.NotFound("version")
	}
	return rec.versions[number-1].Copy(), nil
}

// ListVersions implements prompts.Store.
func (s *Store) ListVersions(ctx context.Context, promptID string, p prompts.Page) ([]prompts.PromptVersion, bool, error) {
	if err := p.Validate(); err != nil {
		return nil, false, err
	}
	if err := done(ctx); err != nil {
		return nil, false, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.prompts[promptID]
	if !ok {
		return nil, false, prompts.NotFound("prompt")
	}
	// Newest first: walk down from the newest version older than After.
	// Version ids increase with numbers, so that is a binary search.
	end := len(rec.versions)
	if p.After != "" {
		end, _ = slices.BinarySearchFunc(rec.versions, p.After, func(v prompts.PromptVersion, id string) int {
			switch {
			case v.ID < id:
				return -1
			case v.ID > id:
				return 1
			}
			return 0
		})
	}
	n := min(end, p.Size())
	out := make([]prompts.PromptVersion, 0, n)
	for i := end - 1; i >= end-n; i-- {
		out = append(out, rec.versions[i].Copy())
	}
	return out, end > n, nil
}

// GetActive implements prompts.Store.
func (s *Store) GetActive(ctx context.Context, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if err := checkEnv(env); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if err := done(ctx); err != nil {
		return prompts.ActivePrompt{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.prompts[promptID]
	if !ok {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	return rec.activeCopy(env), nil
}

// GetActiveByKey implements prompts.Store.
func (s *Store) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if err := checkEnv(env); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if err := done(ctx); err != nil {
		return prompts.ActivePrompt{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, ok := s.byKey[projectKey{projectID, key}]
	if !ok {
		if _, ok := s.projects[projectID]; !ok {
			return prompts.ActivePrompt{}, prompts.NotFound("project")
		}
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	return s.prompts[id].activeCopy(env), nil
}

// activeCopy returns the prompt with its version active in env, copied in
// one allocation: the description, the version and its change summary share
// one block, so that the read path stays cheap.
func (rec *prompt) activeCopy(env prompts.Environment) prompts.ActivePrompt {
	out := prompts.ActivePrompt{Prompt: rec.p, Environment: env}
	n := rec.active[envIndex(env)]
	if n == 0 && rec.p.Description == nil {
		return out
	}
	blk := new(struct {
		v             prompts.PromptVersion
		desc, summary string
	})
	if rec.p.Description != nil {
		blk.desc = *rec.p.Description
		out.Description = &blk.desc
	}
	if n != 0 {
		blk.v = rec.versions[n-1]
		if blk.v.ChangeSummary != nil {
			blk.summary = *blk.v.ChangeSummary
			blk.v.ChangeSummary = &blk.summary
		}
		out.ActiveVersion = &blk.v
	}
	return out
}

// Activate implements prompts.Store.
func (s *Store) Activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if err := done(ctx); err != nil {
		return prompts.ActivePrompt{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.prompts[in.PromptID]
	if !ok {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	n := in.VersionNumber
	if in.VersionID != "" {
		n = 0
		for i := range rec.versions {
			if rec.versions[i].ID == in.VersionID {
				n = i + 1
				break
			}
		}
	}
	if n < 1 || n > len(rec.versions) {
		return prompts.ActivePrompt{}, prompts.NotFound("version")
	}
	rec.active[envIndex(in.Environment)] = n
	return rec.activeCopy(in.Environment), nil
}

// Deactivate implements prompts.Store.
func (s *Store) Deactivate(ctx context.Context, promptID string, env prompts.Environment) error {
	if err := checkEnv(env); err != nil {
		return err
	}
	if err := done(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.prompts[promptID]
	if !ok {
		return prompts.NotFound("prompt")
	}
	rec.active[envIndex(env)] = 0
	return nil
}
