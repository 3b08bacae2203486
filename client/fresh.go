package client

import (
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptkit/prompts"
)

// DefaultFreshWindow is how long, after a write of a prompt, the client's
// reads of it ask the server for a fresh answer (see freshness).
const DefaultFreshWindow = 2 * time.Second

// hdrNoCache asks a server to answer from its store, not from its cache
// (RFC 9111).
var hdrNoCache = []string{"no-cache"}

// freshness makes a process read its own writes through any replica of
// the server: a server that caches reads (package cache) learns of a
// write made through another replica from its feed, some milliseconds
// later. So for a window after a write of a prompt, the client's reads of
// that prompt, and its reads by key in its project, carry
// Cache-Control: no-cache, which a server answers from its store. A write
// whose answer does not name the project (a version's) freshens every
// read by key. The window is a plain time: long enough for any feed to
// deliver, short enough to cost nothing when writes are rare.
type freshness struct {
	window time.Duration
	until  atomic.Int64 // the latest end of a window, in Unix nanoseconds

	mu       sync.Mutex
	prompts  map[string]int64 // prompt id: the end of its window
	projects map[string]int64 // project id: the end of its reads by key's
	anyKey   int64            // every read by key, until
}

func newFreshness(window time.Duration) *freshness {
	return &freshness{window: window, prompts: map[string]int64{}, projects: map[string]int64{}}
}

// wrote records a write of a prompt of a project ("" when the write's
// answer does not name it).
func (f *freshness) wrote(promptID, projectID string) {
	end := time.Now().Add(f.window).UnixNano()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prune()
	if promptID != "" {
		f.prompts[promptID] = end
	}
	if projectID != "" {
		f.projects[projectID] = end
	} else {
		f.anyKey = end
	}
	f.until.Store(end)
}

// prune drops the windows that ended, once the maps hold many. The
// caller holds mu.
func (f *freshness) prune() {
	if len(f.prompts)+len(f.projects) < 256 {
		return
	}
	now := time.Now().UnixNano()
	for _, m := range []map[string]int64{f.prompts, f.projects} {
		for k, end := range m {
			if end < now {
				delete(m, k)
			}
		}
	}
}

// prompt reports whether reads of the prompt are in a window.
func (f *freshness) prompt(id string) bool {
	now := time.Now().UnixNano()
	if f.until.Load() < now {
		return false // no window is open: no lock
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.prompts[id] >= now
}

// byKey reports whether reads by key in the project are in a window.
func (f *freshness) byKey(projectID string) bool {
	now := time.Now().UnixNano()
	if f.until.Load() < now {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.anyKey >= now || f.projects[projectID] >= now
}

// header returns the header of a read: Cache-Control: no-cache when fresh.
func header(fresh bool) http.Header {
	if !fresh {
		return nil
	}
	return http.Header{"Cache-Control": hdrNoCache}
}

// memo keeps what the read of a prompt in an environment does not say:
// the prompt's created_at (which only the prompt list sends), and its
// active version's change summary and variables (which only the read of
// the version sends). None of them ever changes, so what it keeps is
// never stale, and a read of a prompt costs one request once the prompt
// and its version were seen. It is bounded: when full, it starts again.
type memo struct {
	mu       sync.Mutex
	created  map[string]time.Time // by prompt id
	versions map[string]versionExtra
	// The versions of the splits read, whole, by id: a split's answer
	// holds one version, the others are read once and kept (see
	// Client.GetActive). At most maxMemoBytes of them.
	whole      map[string]prompts.PromptVersion
	wholeBytes int
}

type versionExtra struct {
	summary   *string
	format    prompts.TemplateFormat
	variables []string
	partials  []string
}

const (
	maxMemo      = 4096
	maxMemoBytes = 16 << 20
)

func newMemo() *memo {
	return &memo{created: map[string]time.Time{}, versions: map[string]versionExtra{}, whole: map[string]prompts.PromptVersion{}}
}

// wholeVersion keeps v, a version of a split, whole.
func (m *memo) wholeVersion(v prompts.PromptVersion) {
	n := wholeSize(v)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.whole[v.ID]; ok {
		return
	}
	if len(m.whole) >= maxMemo || m.wholeBytes+n > maxMemoBytes {
		clear(m.whole)
		m.wholeBytes = 0
	}
	m.whole[v.ID] = v.Copy()
	m.wholeBytes += n
}

// wholeOf returns a copy of the version with this id kept whole, if it
// is.
func (m *memo) wholeOf(id string) (prompts.PromptVersion, bool) {
	m.mu.Lock()
	v, ok := m.whole[id]
	m.mu.Unlock()
	if !ok {
		return prompts.PromptVersion{}, false
	}
	return v.Copy(), true
}

// wholeSize estimates the bytes a version kept whole holds.
func wholeSize(v prompts.PromptVersion) int {
	n := 256 + len(v.ID) + len(v.PromptID) + len(v.Content) + len(v.Metadata)
	if v.ChangeSummary != nil {
		n += len(*v.ChangeSummary)
	}
	for _, s := range v.Variables {
		n += 16 + len(s)
	}
	for _, s := range v.Partials {
		n += 16 + len(s)
	}
	return n
}

// prompt keeps a prompt's created_at.
func (m *memo) prompt(p prompts.Prompt) {
	if p.ID == "" || p.CreatedAt.IsZero() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.created) >= maxMemo {
		clear(m.created)
	}
	m.created[p.ID] = p.CreatedAt
}

// fillPrompt sets p's created_at and reports whether it knew it.
func (m *memo) fillPrompt(p *prompts.Prompt) bool {
	m.mu.Lock()
	t, ok := m.created[p.ID]
	m.mu.Unlock()
	if ok {
		p.CreatedAt = t
	}
	return ok
}

// version keeps a version's change summary, template format, variables
// and partials.
func (m *memo) version(v prompts.PromptVersion) {
	x := versionExtra{format: v.TemplateFormat, variables: slices.Clone(v.Variables), partials: slices.Clone(v.Partials)}
	if v.ChangeSummary != nil {
		s := *v.ChangeSummary
		x.summary = &s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.versions) >= maxMemo {
		clear(m.versions)
	}
	m.versions[v.ID] = x
}

// fillVersion sets v's change summary, template format, variables and
// partials, as copies, and
// reports whether it knew them.
func (m *memo) fillVersion(v *prompts.PromptVersion) bool {
	m.mu.Lock()
	x, ok := m.versions[v.ID]
	m.mu.Unlock()
	if !ok {
		return false
	}
	if x.summary != nil {
		s := *x.summary
		v.ChangeSummary = &s
	}
	v.TemplateFormat, v.Variables, v.Partials = x.format, slices.Clone(x.variables), slices.Clone(x.partials)
	return true
}
