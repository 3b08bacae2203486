// Package cache is a prompts.Store that wraps another and answers its
// single-item reads from memory: the read of a prompt in an environment,
// by id and by key (what an application makes on every call), and the
// reads of one prompt, version or project. Lists pass through; so do
// writes, after which the process that wrote reads its own write at once.
//
// # Abilities
//
// A Store is a prompts.ActiveReader whatever the store under it: its
// ReadActive answers from memory, shares the value it holds when asked
// (Shared), reads the store under it when asked for a fresh answer
// (Fresh), and reports stale answers (see Outages). It reads that store
// with ReadActive when the store has it, passing FailFast down.
//
// The event log and webhooks (prompts.EventLog, prompts.WebhookStore) are
// the store's, not the cache's: a Store claims neither, whatever the
// store under it keeps, and Unwrap returns that store, where
// prompts.EventLogOf and prompts.WebhookStoreOf find them. So httpapi
// serves the event log of a store under a cache, and answers 501 for a
// store that keeps none, cache or no cache:
//
//	c := cache.New(pg)
//	log, ok := prompts.EventLogOf(c) // pg's, when pg keeps one
//
// # Freshness
//
// Other processes writing to the same database change what the cache
// holds. A prompts.Feed tells the cache what they changed: an
// implementation (sqlstore.Feed) watches the store's change stream (such
// as PostgreSQL's LISTEN/NOTIFY) and calls the cache's Invalidate, Lost
// and Recovered: the cache is a prompts.Sink. The caller runs the feed,
// on a goroutine of its own: the cache starts none. Until the feed first
// reports Recovered, and from a Lost until the next Recovered, the cache
// cannot know what changed: every read goes to the store, and Recovered
// then drops everything cached before. A feed that loses nothing across a
// loss (package client's, over an event stream that resumes from its last
// event) reports Resumed instead, and the cache keeps what it holds: the
// changes made meanwhile come as invalidations (prompts.Resumer). A cache over a store no other process writes
// (memstore in one process) needs no feed: New it with Standalone.
//
// A cache never answers a read with an older prompt than one it answered
// before for that read (prompts.Prompt.Revision orders them), and never
// keeps an entry filled by a read that raced with an invalidation of it:
// invalidations move generation counters on, and a read stores what it
// fetched only if no invalidation of it came while it fetched.
//
// # Outages
//
// While the store is unavailable and the feed is lost, a read the cache
// has answered before answers the last value it knows (stale-if-error),
// counted in Stats.Stale and reported stale by ReadActive (httpapi says so
// in Cache-Status); a read it never saw fails with the store's error.
//
// Such a read does not wait for the store. When the cache holds an answer
// to give should the store fail (the last value known while the feed is
// lost, or a fallback snapshot's), it reads a prompt from a store that is
// a prompts.ActiveReader with FailFast: a store that retries an
// unavailable backend, as package client's does, tries once and fails at
// once, and the cache answers. (Reads of a version or a project cannot
// say so: they wait for the store's retries.) And once a read found the store unavailable, the reads that
// have such an answer give it without asking the store, but for one read
// a second that asks again (a probe), until the store answers a read, a
// write goes through the cache, or the feed reports Recovered or Resumed
// (it reached the store). So in an outage, even of a store that does not
// answer at all (a host that drops packets, where each request would wait
// for its timeout), every read but the probes answers from memory at
// once; a store that came back is read again within a second, or as soon
// as the feed sees it. Reads the cache has no answer for always ask the
// store, with its retries.
//
// # Fallback snapshots
//
// A Snapshot is every prompt of a project with the version active in each
// environment: TakeSnapshot reads one from a Store, the HTTP interface
// sends one (GET /v1/integration/projects/{project_id}/snapshot),
// MarshalJSON and ParseSnapshot write and read its JSON. Given to New
// with WithFallback, it answers the reads the cache holds nothing for
// while the store is unavailable, marked stale as above: an application
// that embeds a snapshot file (go:embed) starts and serves even when its
// store cannot be reached, and reads fresh values as soon as it can.
//
//	//go:embed prompts.snapshot.json
//	var snapshotJSON []byte
//
//	snap, err := cache.ParseSnapshot(snapshotJSON)
//	if err != nil {
//		return err // a build that embeds a bad file should not start
//	}
//	c := cache.New(store, cache.WithFallback(snap))
//
// # Memory
//
// Entries are bounded by a byte budget (WithSize, default 64 MiB), the
// least recently used going first. Concurrent misses of one entry make
// one store read.
package cache

import (
	"container/list"
	"context"
	"errors"
	"hash/maphash"
	"sync"
	"time"

	"github.com/promptkit/prompts"
)

// DefaultSize is the byte budget of a cache unless WithSize says
// otherwise.
const DefaultSize = 64 << 20

// Store is a prompts.Store that answers reads from memory. Make one with
// New; it is safe for concurrent use.
type Store struct {
	next       prompts.Store
	budget     int64
	standalone bool

	mu       sync.Mutex
	entries  map[key]*entry
	lru      list.List // of *entry, most recently used first
	bytes    int64
	dark     bool // the feed is lost, or not yet connected: nothing is fresh
	epoch    uint64
	gens     [stripes]uint64 // invalidations, by stripe of prompt id and of project id
	inflight map[key]*call
	// The entries of each prompt, and the reads by key of each project,
	// for Invalidate.
	byPrompt  map[string]map[*entry]struct{}
	byProject map[string]map[*entry]struct{}
	// The writes in flight through this cache, by prompt and by project:
	// the reads they concern go to the store until they are done.
	writing           map[string]int
	writingProject    map[string]int
	writingAnyProject int // writes whose project is unknown
	stats             Stats
	seed              maphash.Seed
	// What the snapshots of WithFallback answer, by read; never changed
	// after New.
	fallback map[key]any
	// When a read last found the store unavailable (or a probe began);
	// zero when the store answered since.
	downAt time.Time
	now    func() time.Time
}

// probeEvery is how often, once a read found the store unavailable, a read
// with a stale answer at hand asks the store again rather than answer.
const probeEvery = time.Second

// stripes is how many generation counters invalidations spread over: an
// invalidation of one prompt makes fills of the prompts that share its
// stripe skip storing what they read, a small and bounded cost.
const stripes = 256

var _ prompts.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithSize sets the byte budget of the cached entries; values below 1
// keep DefaultSize.
func WithSize(bytes int64) Option {
	return func(s *Store) {
		if bytes > 0 {
			s.budget = bytes
		}
	}
}

// Standalone says that no other process writes to the store, so that the
// cache needs no feed to be fresh: it caches from the start.
func Standalone() Option { return func(s *Store) { s.standalone = true } }

// WithFallback gives the cache a snapshot to answer from when the store
// is unavailable (prompts.ErrUnavailable) and the cache holds nothing for
// the read: GetActive and GetActiveByKey of the snapshot's prompts in
// each of its environments, GetPrompt of its prompts, GetProject of its
// project. Such an answer is stale, as the last value known is in an
// outage: counted in Stats.Stale, reported stale by ReadActive. The
// snapshot never answers a read the store
// answers (a prompt the store does not know stays unknown), and is never
// kept: once the store answers a read, its value answers it, whatever
// the snapshot's revision. Given more than once, the cache answers from
// every snapshot, the later one winning for a prompt in two. The cache
// copies what it answers: changing snap afterwards changes nothing. A nil
// snapshot adds nothing.
func WithFallback(snap *Snapshot) Option {
	return func(s *Store) {
		if snap == nil {
			return
		}
		if s.fallback == nil {
			s.fallback = make(map[key]any)
		}
		s.fallback[key{kind: kindProject, a: snap.Project.ID}] = snap.Project
		for _, p := range snap.Prompts {
			s.fallback[key{kind: kindPrompt, a: p.Prompt.ID}] = p.Prompt.Copy()
			for _, env := range snap.environments() {
				a := p.ActiveIn(env).Copy()
				s.fallback[key{kind: kindActive, a: a.ID, env: env}] = a
				s.fallback[key{kind: kindActiveByKey, a: a.ProjectID, b: a.Key, env: env}] = a
			}
		}
	}
}

// New returns a cache over next. Without Standalone it caches nothing
// until a feed reports Recovered.
func New(next prompts.Store, opts ...Option) *Store {
	s := &Store{
		next:           next,
		budget:         DefaultSize,
		entries:        make(map[key]*entry),
		inflight:       make(map[key]*call),
		byPrompt:       make(map[string]map[*entry]struct{}),
		byProject:      make(map[string]map[*entry]struct{}),
		writing:        make(map[string]int),
		writingProject: make(map[string]int),
		seed:           maphash.MakeSeed(),
		now:            time.Now,
	}
	for _, o := range opts {
		o(s)
	}
	s.dark = !s.standalone
	return s
}

// Unwrap returns the store under the cache, the one New was given: its
// reads are fresh, and its event log and webhooks are those the cache
// passes through (see Abilities).
func (s *Store) Unwrap() prompts.Store { return s.next }

// Stats are a cache's counters since New.
type Stats struct {
	Hits      int64 // reads answered from memory
	Misses    int64 // reads that went to the store
	Evictions int64 // entries dropped for the budget
	Entries   int64 // entries held now
	Bytes     int64 // their estimated size
	Stale     int64 // reads answered with a stale value while the store was unavailable (the last value known, or WithFallback's)
	Lost      bool  // the feed is lost (or not yet connected): reads go to the store

	// What the feed reported: Losses counts the Lost that came while the
	// cache was fed (a repeated Lost, or one before the first Recovered,
	// changes nothing); Recoveries counts every Recovered, the first
	// included. A loss and a recovery that came and went between two
	// Stats still show in them.
	Losses     int64
	Recoveries int64
	// Resumptions counts the Resumed that ended a loss: the feed lost
	// nothing, and the cache kept what it held (see Resumed).
	Resumptions int64
}

// Stats returns the cache's counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Entries = int64(len(s.entries))
	st.Bytes = s.bytes
	st.Lost = s.dark
	return st
}

var _ prompts.Sink = (*Store)(nil)

// Invalidate drops what the cache holds of the invalidation's prompt, and
// of prompts read by key in its project, and makes the reads in flight for
// them store nothing.
func (s *Store) Invalidate(ev prompts.Invalidation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.invalidate(ev)
}

// invalidate is Invalidate. The caller holds mu.
func (s *Store) invalidate(ev prompts.Invalidation) {
	if ev.Environment != "" {
		s.invalidateEnvironment(ev.ProjectID, ev.Environment)
	}
	s.gens[s.stripe(ev.PromptID)]++
	s.gens[s.stripe(ev.ProjectID)]++
	for e := range s.byPrompt[ev.PromptID] {
		s.remove(e)
	}
	for e := range s.byProject[ev.ProjectID] {
		s.remove(e)
	}
}

// invalidateEnvironment drops every read of env in the project (removed,
// or changed), and makes every read in flight store nothing: the entries
// of one environment are not indexed, and such a change is rare. The
// caller holds mu.
func (s *Store) invalidateEnvironment(projectID string, env prompts.Environment) {
	for i := range s.gens {
		s.gens[i]++
	}
	for k, e := range s.entries {
		if a, ok := e.value.(prompts.ActivePrompt); ok && k.env == env && a.ProjectID == projectID {
			s.remove(e)
		}
	}
}

// invalidateAllByKey drops every read by key and makes every read in
// flight store nothing. The caller holds mu.
func (s *Store) invalidateAllByKey() {
	for i := range s.gens {
		s.gens[i]++
	}
	for _, set := range s.byProject {
		for e := range set {
			s.remove(e)
		}
	}
}

// Lost marks everything held as possibly stale: reads go to the store,
// and the values held answer only when it is unavailable.
func (s *Store) Lost() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dark {
		s.stats.Losses++
	}
	s.dark = true
	s.epoch++
}

// Recovered drops everything cached before and caches again.
func (s *Store) Recovered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recovered()
}

// recovered is Recovered. The caller holds mu.
func (s *Store) recovered() {
	for _, e := range s.entries {
		s.remove(e)
	}
	s.dark = false
	s.downAt = time.Time{} // the feed reached the store
	s.epoch++
	s.stats.Recoveries++
}

func (s *Store) stripe(id string) int {
	return int(maphash.String(s.seed, id) % stripes)
}

// kind is what a key reads.
type kind uint8

const (
	kindActive kind = iota + 1
	kindActiveByKey
	kindPrompt
	kindVersion
	kindProject
)

// key names one read: kind with its arguments.
type key struct {
	kind kind
	a, b string // prompt id; or project id and prompt key; or project id
	n    int    // a version number
	env  prompts.Environment
}

// entry is one cached answer.
type entry struct {
	key      key
	value    any // prompts.ActivePrompt, Prompt, PromptVersion or Project
	promptID string
	revision int64
	size     int64
	elem     *list.Element
}

// call is a store read in flight, which concurrent misses of one key wait
// for.
type call struct {
	done  chan struct{}
	snap  snapshot // when it began
	value any      // what it answered, once done is closed
	err   error
	stale bool // the answer is a fallback's
}

// snapshot is what a fill compares before it stores: the counters that an
// invalidation of what it reads would move.
type snapshot struct {
	epoch, gen uint64
}

// snap returns k's snapshot. Its stripe is that of k.a: the prompt's id,
// or for a read by key the project's, which every invalidation of one of
// its prompts moves on too (the key may come to name another prompt).
func (s *Store) snap(k key) snapshot {
	return snapshot{s.epoch, s.gens[s.stripe(k.a)]}
}

// read answers k from memory, or by fetch, which reads the store; fetched
// values are stored unless an invalidation came meanwhile; fetch is told
// to fail fast when the cache holds an answer to give should the store be
// unavailable. copyOut returns a copy of a value for the caller.
func read[T any](s *Store, ctx context.Context, k key, fetch func(ctx context.Context, failFast bool) (T, string, int64, error), copyOut func(T) T, stale *bool) (T, error) {
	var zero T
	for {
		if err := ctx.Err(); err != nil {
			return zero, prompts.ContextDone(err) // as every Store, a hit included
		}
		s.mu.Lock()
		if s.beingWritten(k) {
			// A write through this cache is changing what k reads: the
			// store answers, as it would without the cache.
			s.stats.Misses++
			s.mu.Unlock()
			v, _, _, err := fetch(ctx, false)
			if err != nil {
				return zero, err
			}
			return copyOut(v), nil
		}
		if e, ok := s.entries[k]; ok && !s.dark {
			s.lru.MoveToFront(e.elem)
			s.stats.Hits++
			v := e.value.(T)
			s.mu.Unlock()
			return copyOut(v), nil
		}
		// Join a read in flight only if nothing that concerns k happened
		// since it began: else it may answer older than a write or an
		// invalidation this read comes after.
		if c, ok := s.inflight[k]; ok && !s.dark && c.snap == s.snap(k) {
			s.mu.Unlock()
			select {
			case <-c.done:
			case <-ctx.Done():
				return zero, prompts.ContextDone(ctx.Err())
			}
			if c.err != nil && (errors.Is(c.err, context.Canceled) || errors.Is(c.err, context.DeadlineExceeded)) {
				continue // the reader it joined went away: read again, on this context
			}
			if c.err != nil {
				return zero, c.err
			}
			if c.stale {
				s.mu.Lock()
				s.stats.Stale++
				s.mu.Unlock()
				if stale != nil {
					*stale = true
				}
			}
			return copyOut(c.value.(T)), nil
		}
		// A stale answer at hand (the last value known while the feed is
		// lost, else the fallback's): the store is not waited for.
		failFast := false
		if sv, ok := s.staleAnswer(k); ok {
			if s.skipStore() {
				s.stats.Stale++
				s.mu.Unlock()
				if stale != nil {
					*stale = true
				}
				return copyOut(sv.(T)), nil
			}
			failFast = true
		}
		s.stats.Misses++
		snap := s.snap(k)
		var c *call
		if !s.dark {
			c = &call{done: make(chan struct{}), snap: snap}
			s.inflight[k] = c
		}
		s.mu.Unlock()

		v, promptID, revision, err := fetch(ctx, failFast)

		s.mu.Lock()
		s.noteStore(ctx, err)
		answer, wasStale, answerErr := s.settle(k, snap, v, promptID, revision, err)
		if c != nil {
			// The readers that joined get what this one answers; but
			// when this one's context ended, they read again on theirs
			// rather than take a fallback's answer.
			if s.inflight[k] == c {
				delete(s.inflight, k)
			}
			if wasStale && ctx.Err() != nil {
				c.err = prompts.ContextDone(ctx.Err())
			} else {
				c.value, c.err, c.stale = answer, answerErr, wasStale
			}
			close(c.done)
		}
		s.mu.Unlock()
		if answerErr != nil {
			return zero, answerErr
		}
		if wasStale && stale != nil {
			*stale = true
		}
		return copyOut(answer.(T)), nil
	}
}

// settle decides what a read that fetched v (or err) answers, and
// whether that is stale, and stores it when it may. The caller holds mu.
func (s *Store) settle(k key, snap snapshot, v any, promptID string, revision int64, err error) (any, bool, error) {
	e, held := s.entries[k]
	switch {
	case err != nil:
		if !errors.Is(err, prompts.ErrUnavailable) {
			return nil, false, err
		}
		if held && s.dark {
			s.stats.Stale++
			return e.value, true, nil // the last value known
		}
		if fv, ok := s.fallback[k]; ok && !held {
			s.stats.Stale++
			return fv, true, nil // the snapshot's, never kept
		}
		return nil, false, err
	case held && e.revision > revision:
		return e.value, false, nil // never older than what was answered
	case s.snap(k) != snap:
		// An invalidation (or a loss, or a recovery) came while this read
		// ran: what it read may be older than the change. Answer it (it
		// was current when read), keep nothing.
		return v, false, nil
	}
	// Kept also while the feed is lost, where it answers only when the
	// store is unavailable (a hit needs a fresh cache).
	s.put(k, v, promptID, revision)
	return v, false, nil
}

// staleAnswer returns what a read of k answers if the store is
// unavailable, as settle decides it: the entry held while the feed is
// lost, else the fallback's when nothing is held. The caller holds mu.
func (s *Store) staleAnswer(k key) (any, bool) {
	if e, held := s.entries[k]; held {
		return e.value, s.dark
	}
	v, ok := s.fallback[k]
	return v, ok
}

// skipStore reports whether a read with a stale answer at hand gives it
// without asking the store: a read found the store unavailable less than
// probeEvery ago. After that, one read asks (it probes), and the others
// answer for probeEvery more. The caller holds mu.
func (s *Store) skipStore() bool {
	if s.downAt.IsZero() {
		return false
	}
	now := s.now()
	if now.Sub(s.downAt) < probeEvery {
		return true
	}
	s.downAt = now // this read probes
	return false
}

// noteStore records what a read learnt of the store: unavailable, or
// there (any other answer, not found included). A read whose own context
// ended learnt nothing. The caller holds mu.
func (s *Store) noteStore(ctx context.Context, err error) {
	switch {
	case err == nil || !errors.Is(err, prompts.ErrUnavailable):
		s.downAt = time.Time{}
	case ctx.Err() == nil:
		s.downAt = s.now()
	}
}

// beingWritten reports whether a write through the cache is changing
// what k reads. The caller holds mu.
func (s *Store) beingWritten(k key) bool {
	if k.kind == kindActiveByKey {
		return s.writingProject[k.a] > 0 || s.writingAnyProject > 0
	}
	return k.kind != kindProject && s.writing[k.a] > 0
}

// put stores v under k, evicting the least recently used entries over
// the budget. The caller holds mu.
func (s *Store) put(k key, v any, promptID string, revision int64) {
	if e, ok := s.entries[k]; ok {
		s.remove(e)
	}
	e := &entry{key: k, value: v, promptID: promptID, revision: revision, size: sizeOf(k, v)}
	e.elem = s.lru.PushFront(e)
	s.entries[k] = e
	s.bytes += e.size
	if promptID != "" {
		index(s.byPrompt, promptID, e)
	}
	if k.kind == kindActiveByKey {
		index(s.byProject, k.a, e)
	}
	for s.bytes > s.budget && s.lru.Len() > 1 {
		s.remove(s.lru.Back().Value.(*entry))
		s.stats.Evictions++
	}
}

// remove drops e. The caller holds mu.
func (s *Store) remove(e *entry) {
	s.lru.Remove(e.elem)
	delete(s.entries, e.key)
	s.bytes -= e.size
	unindex(s.byPrompt, e.promptID, e)
	if e.key.kind == kindActiveByKey {
		unindex(s.byProject, e.key.a, e)
	}
}

func index(m map[string]map[*entry]struct{}, id string, e *entry) {
	set, ok := m[id]
	if !ok {
		set = make(map[*entry]struct{})
		m[id] = set
	}
	set[e] = struct{}{}
}

func unindex(m map[string]map[*entry]struct{}, id string, e *entry) {
	if set, ok := m[id]; ok {
		delete(set, e)
		if len(set) == 0 {
			delete(m, id)
		}
	}
}
