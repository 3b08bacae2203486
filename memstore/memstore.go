// Package memstore is the embedded prompts.Store: in memory (New), the
// one to use in unit tests, or in memory and on a file (Open), the durable
// default of an embedded library and of the standalone server.
//
// It is safe for concurrent use. Reads share a read lock and never wait for
// each other; writes take the lock exclusively for the few map and slice
// updates they make, after validation. Values are copied in and out, so no
// caller can change what is stored; but a Store is a prompts.ActiveReader,
// whose reads asked Shared answer without a copy, for a caller that
// changes nothing (httpapi's reads do). A Store made by New persists nothing:
// the data lives as long as the Store. A Store made by Open keeps a journal
// of its writes in a file and returns from a write once it is on disk; see
// Open, and file.go for the format and for why a journal.
//
// # Events and webhooks
//
// A Store keeps the log of its changes (prompts.EventLog) and webhooks
// with their outbox (prompts.WebhookStore). Each write appends its events,
// and queues a delivery of each to every webhook that matches it, in the
// step that makes the change (with Open, in the same journal record). The
// ids are 1, 2, 3, …; an id is never given twice, also after a restart.
//
// Events are kept for the event retention (WithEventRetention, by default
// prompts.DefaultEventRetention), and so are the attempts to deliver
// them; a delivery not ended within the retention is dropped. What is
// past it is removed by the writes that follow, a few at a time, never on
// a goroutine; the Store remembers the newest id it removed, so that a
// reader who asks for what follows an older one gets
// prompts.ErrEventsExpired. A delivered or failed delivery is removed at
// once; deleting a webhook removes its deliveries and its attempts. A
// claim's lease is kept in memory only, not in the data file (which one
// process holds): so an attempt costs the file one record, its attempt's,
// of a few hundred bytes. After a restart, a delivery whose attempt was
// cut short is due at once.
//
// # The data file
//
// A Store made by Open keeps its file by these rules, so that neither
// another user of the machine nor an unlucky operator can make it lose or
// misplace an acknowledged write:
//
//   - The path is resolved once, at Open, into an absolute path through
//     symbolic links (those of the file when it exists, else those of its
//     directory): the data stays in the file a link points at, on the
//     volume behind it, and compactions replace that file, never the
//     link. A link changed later changes nothing until the next Open. A
//     link to a file that does not exist is refused, not followed.
//   - A directory that any user may write (mode o+w) without the sticky
//     bit (which /tmp has) is refused, by a message naming it: another
//     user could put a file or a link of theirs in the data file's place.
//     This holds for the directory of the file and for that of a link to
//     it; a directory writable by its group is accepted. (On Unix: the
//     modes of other systems do not say who may write.)
//   - The data file is created when missing, never through a link, and
//     must be a regular file. A file beside it (FILE.compact, the new file
//     of a compaction) is created exclusively: never through a symbolic
//     link, never reusing a file that exists. A stale one, left by a
//     crash, is removed by its name first (which removes a link, not what
//     it points at); when that cannot be done, the compaction fails.
//   - One Store at a time writes a file, even when a lock file is removed
//     by hand: Open takes an exclusive flock on the data file itself (and
//     on a compaction's new file before it takes the old one's place). A
//     second Open is refused while the first is open, in another process
//     or in this one (a flock belongs to an open file, not to a process).
//     No FILE.lock is taken: one left by an earlier version may be
//     removed, and such a version must be stopped before this one opens
//     its file. Where flock is missing (Windows, Solaris, AIX and a few
//     more), Open creates FILE.lock exclusively instead, and Close
//     removes it.
//   - The data file removed or replaced at its path while open stops the
//     writes, with an error that Err reports: a write to it would be lost,
//     and another Open may hold the file at the path by then.
//   - A failed compaction (no file descriptor left, a full disk) changes
//     nothing and stops nothing: the write that set it off is on disk, and
//     succeeds; the failure is logged once, and the compaction is retried
//     at later writes, after a delay that doubles from a second to a
//     minute (on the Store's clock). A failed write or fsync of the
//     journal, or of its directory once a compaction's file took the old
//     one's place, stops the writes: after a failed fsync, what is on disk
//     is unknown.
package memstore

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/promptkit/prompts"
)

var (
	_ prompts.Store        = (*Store)(nil)
	_ prompts.EventLog     = (*Store)(nil)
	_ prompts.WebhookStore = (*Store)(nil)
)

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock that stamps ids and timestamps, and times the
// retries of a failed compaction (default time.Now).
func WithClock(c prompts.Clock) Option { return func(s *Store) { s.clock = c } }

// WithEventRetention sets how long events, and the attempts to deliver
// them, are kept (default prompts.DefaultEventRetention); d ≤ 0 keeps the
// default.
func WithEventRetention(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.eventRetention = d
		}
	}
}

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
	idem         map[idemKey]prompts.IdempotencyRecord
	envs         map[string][]prompts.ProjectEnvironment // project id -> its environments, when changed (projectenv.go)
	idemOrder    []idemEntry                             // oldest first, for expiry

	// The event log (event.go).
	events         []prompts.Event    // oldest first, ids increasing
	eventsOf       map[string][]int64 // project id -> the ids of its kept events, increasing
	lastEvent      int64              // the newest id given, kept or not
	expiredThrough int64              // the newest id the retention removed; 0 when none
	eventRetention time.Duration
	appended       chan struct{} // closed and replaced at each append

	// The webhooks and their outbox (webhook.go).
	webhooks      map[string]*prompts.Webhook
	webhookOrder  []string // ids, sorted
	deliveries    map[string]*delivery
	deliveryOrder []string                             // ids, oldest first; may hold removed ones
	attempts      map[string][]prompts.DeliveryAttempt // webhook id -> its attempts, oldest first
	lastDelivery  string

	// The API keys (apikey.go).
	keys      map[string]*storedKey
	keyOrder  []string // ids, sorted
	keyByHash map[[32]byte]string
	keyByName map[string]string

	step step // what a write changed besides its result, for the journal (Open)

	journal *journal // the file of a Store made by Open; nil for New's
	log     *slog.Logger
}

type projectKey struct{ project, key string }

// prompt is the stored state of one prompt. Its Prompt's Description and
// its versions' ChangeSummary point at strings this package owns.
type prompt struct {
	p        prompts.Prompt
	versions []prompts.PromptVersion         // versions[n-1] is number n
	active   [2]pointer                      // what production and staging point at
	others   map[prompts.Environment]pointer // the project's other environments that point at something (at)
	// inputs[n-1] are version n's typed inputs (prompts.Signature.Inputs),
	// which the promotion guard compares.
	inputs [][]string
	// deployments are the records of the changes of active, oldest first
	// (ids increasing).
	deployments []prompts.Deployment
	// journaledVersions and journaledDeployments count the versions and
	// records already in the journal (Open).
	journaledVersions, journaledDeployments int
}

// New returns an empty Store.
func New(opts ...Option) *Store {
	s := &Store{
		projects:  make(map[string]*prompts.Project),
		slugs:     make(map[string]string),
		prompts:   make(map[string]*prompt),
		byProject: make(map[string][]string),
		byKey:     make(map[projectKey]string),
		idem:      make(map[idemKey]prompts.IdempotencyRecord),
		envs:      make(map[string][]prompts.ProjectEnvironment),

		eventRetention: prompts.DefaultEventRetention,
		appended:       make(chan struct{}),
		eventsOf:       make(map[string][]int64),
		webhooks:       make(map[string]*prompts.Webhook),
		deliveries:     make(map[string]*delivery),
		attempts:       make(map[string][]prompts.DeliveryAttempt),
		keys:           make(map[string]*storedKey),
		keyByHash:      make(map[[32]byte]string),
		keyByName:      make(map[string]string),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// begin is the preamble of every method: the input's validation (invalid
// is the error of its Validate, nil for an input without one), then the
// context's.
func begin(ctx context.Context, invalid error) error {
	if invalid != nil {
		return invalid
	}
	if err := ctx.Err(); err != nil {
		return prompts.ContextDone(err)
	}
	return nil
}

// rlock is the preamble of every read: begin, then the read lock, which
// the caller releases (defer s.mu.RUnlock()) once rlock succeeded.
func (s *Store) rlock(ctx context.Context, invalid error) error {
	if err := begin(ctx, invalid); err != nil {
		return err
	}
	s.mu.RLock()
	return nil
}

// insertSorted inserts id into the sorted slice ids.
func insertSorted(ids []string, id string) []string {
	i, _ := slices.BinarySearch(ids, id)
	return slices.Insert(ids, i, id)
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

func copyString(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}
