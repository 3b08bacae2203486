// Package sqlstore is the PostgreSQL prompts.Store, for services that run
// several replicas against one database.
//
// The caller opens and owns the pool (github.com/jmoiron/sqlx over the
// github.com/lib/pq driver), builds the Store on it, and runs the migrations
// explicitly, typically once at start:
//
//	db, err := sqlx.Open("postgres", "postgres://app@db.internal/app?sslmode=require")
//	if err != nil { ... }
//	store, err := sqlstore.New(db)         // tables in schema "prompts"
//	if err != nil { ... }
//	defer store.Close()                    // releases prepared statements, not db
//	if err := store.Migrate(ctx); err != nil { ... }
//
// New does no I/O. Migrate is safe to run from every replica at once.
// Ping tells a readiness probe whether the Store can serve: the database
// reachable, the schema there and migrated.
//
// # Guarantees
//
// Everything lives in one schema (WithSchema), so the store can share a
// database with an application's own tables, and tests can isolate
// themselves. Version numbers are gapless and unique per prompt however many
// processes write at once, and version ids increase with the numbers: the
// prompt's row lock serializes the writers of one prompt (see
// Store.CreateVersion). A key is unique within its project by a UNIQUE
// constraint. Ids and timestamps come from the Store's clock, not from the
// database, so that sqlstore and memstore answer alike. A prompt's revision
// (prompts.Prompt.Revision) is a column of its row, moved on in the
// statement or transaction that changes the prompt, its versions or its
// environments, under the row's lock; it is never smaller than the
// microseconds since 1970 of the write's clock, so a database restored
// from a backup goes on with larger revisions than the ones it had handed
// out since.
//
// # Tables
//
// projects, prompts, versions, environments (what each environment of a
// prompt points at: one row per prompt and environment with an active
// version, or with a split, which the row holds as JSON beside its first
// entry's version), deployments (the records of the changes of
// environments, with the splits before and after),
// idempotency (see Idempotency); the event log, events, with the sequence
// event_ids, and the webhooks, webhooks and webhook_routes (what each
// subscribes to), with their outbox, deliveries and delivery_attempts (see
// Events); server_keys, the hashes of the keys servers generate for
// themselves (see KeepServerKey); plus schema_migrations, which Migrate
// keeps.
//
// # Errors
//
// Errors are *prompts.Error. A connection that fails, a database that is down,
// shutting down, starting up or out of connections, a serialization failure
// or a lock or statement timeout is prompts.ErrUnavailable: worth a retry.
// A context that ends is prompts.ErrUnavailable wrapping ctx.Err(). Anything
// else from the database is internal, with the driver's error as its cause
// (for logs, never for users). The Store needs nothing to recover from a
// restart of the database or killed connections: database/sql drops the
// broken connections and prepares the statements again on new ones.
//
// Every method returns by the end of its context: at its deadline or
// cancellation, with prompts.ErrUnavailable wrapping ctx.Err(), even when
// the database has fallen silent without closing its connections (its
// processes stopped, a network path gone quiet), for which lib/pq waits
// past any context. So a call whose context can end runs on a goroutine
// of its own, which the caller leaves at that end. The call left behind
// holds its connection until the database answers or the connection
// fails, then closes it: it is never reused. Dial through Dialer so that
// it ends at the Dialer's Timeout however long the silence lasts.
//
// ErrUnavailable on a write does not prove that nothing was written: the
// commit may succeed as the connection dies. A write given a
// prompts.Idempotency can be repeated safely: it is done once.
//
// # Events
//
// The Store keeps the log of its changes (prompts.EventLog) and webhooks
// with their outbox (prompts.WebhookStore). Every write appends its events
// in its own transaction, and in the same statement queues a delivery of
// each to the webhooks it matches (found on an index of webhook_routes); a
// write that changes nothing appends nothing.
//
// Event ids increase in the order in which the writes commit, with no
// gap a reader could see later, whatever the number of processes. A
// sequence alone hands numbers out in the order in which transactions ask,
// so that a reader who saw 42 could miss 41 committing after it. So the
// write takes its ids (from the sequence event_ids) in its last statement,
// under a transaction-level advisory lock of the schema's log, which
// PostgreSQL releases only once the commit is visible: writers take their
// ids in turn, in the order in which they commit. The price: the ends of
// all writing transactions (that statement and the commit, with its flush
// to disk) run one at a time, across all processes; the rest of a write
// runs alongside others as before. A write of one statement (CreateProject,
// CreatePrompt, UpdatePrompt, CreateVersion) does it in that statement; a
// transaction (Activate, Deactivate, Rollback, a version created active, a
// write with an idempotency key) in a last statement before COMMIT, when
// it changed something. Ids need not be consecutive: a write that
// fails after taking ids leaves a hole that no reader ever sees filled. The
// lock is taken with pg_advisory_xact_lock and a key derived from the
// schema's name; an application that shares the database and takes
// advisory locks too is unlikely to pick the same 64-bit key. On a
// database whose default isolation is above READ COMMITTED, racing writers
// of one statement may fail to serialize: they are run again in a READ
// COMMITTED transaction.
//
// Events are kept for the retention (WithEventRetention, by default
// prompts.DefaultEventRetention, by the Store's clock) and removed
// afterwards by the writes that append events, under the lock, up to 16 at
// a time from the oldest, never the newest: ListEvents after an id below
// the oldest kept, less one, is prompts.ErrEventsExpired. A delivery goes
// with its event; attempts past the retention are removed by
// FinishDelivery, 16 at a time. Nothing runs on a goroutine of its own. A
// prompt's events hold the prompt as it was (JSON); the others name the
// project, version or deployment record they report, which never change,
// and a read joins it.
//
// WaitEvents reads the newest id, then waits without polling: the Store
// is woken by its own writes and, when it is given to a Feed as its sink,
// by every write of other processes (each event notifies on Channel):
//
//	go feed.Run(ctx, prompts.Sinks(c, store)) // a cache and the waiters
//
// Without a Feed, a waiter sees the writes of other processes within
// EventPoll.
//
// ClaimDeliveries leases deliveries with FOR UPDATE SKIP LOCKED and a
// time (leased_until): a delivery is in the hands of one claim, in one
// process, until its lease ends. A delivery's id is a ULID of its queue
// time and its row's number. Deliveries and attempts name their webhook
// without a foreign key, so that a write never waits for, or fails on, a
// webhook being deleted; DeleteWebhook removes them, and a delivery queued
// in that race is never claimed.
//
// # Idempotency
//
// CreatePrompt, CreateVersion and Rollback with a prompts.Idempotency run
// in one transaction with the key's record (table idempotency, migrations
// 5 and 6): the key is claimed first, so that a concurrent repeat, in this
// process or another, waits for the first transaction and then answers its
// result; a failure rolls the record back with the write. A record keeps
// the ids of what the write made (a row of about 200 bytes, whatever the
// size of the version), and a repeat reads that again in its transaction
// (see prompts.Replay). Records older than prompts.IdempotencyRetention
// are taken over by a new write of their key, and removed 16 at a time by
// later idempotent writes.
//
// # Upgrading
//
// The code of a release expects the migrations it embeds to be applied,
// and the code of an older release does not know a newer schema. So an
// upgrade that brings migrations (a release's notes say so) stops the
// replicas of the older release, runs Migrate (the standalone server,
// cmd/promptsd, runs it at start), then starts the new release. Migration 2
// (0002_environments_revision.sql) renames the table deployments to
// environments and gives every prompt a revision: an older replica left
// running would fail its reads and write without moving revisions on.
// Migration 6 (0006_idempotency_ids.sql) makes the idempotency records
// keep ids instead of whole results, and converts the records already
// there, which still replay; an older replica left running would fail
// every write given an idempotency key. Migration 7 (0007_events.sql)
// adds the event log and the webhooks, empty: the log starts with the
// writes that follow (ids from 1); an older replica left running would
// write without appending events, which readers of the log would never
// see. Migration 14 (0014_splits.sql) lets an environment hold a traffic
// split (prompts.Split); an older replica left running would serve a
// split's first entry to every subject, and could not point an
// environment that holds one at another version (a check of the row
// refuses it).
//
// # Statements and paging
//
// The statements are prepared on first use and reused on every
// connection: lib/pq keeps no statement cache, so an unprepared query
// would be parsed again on every call. The reads, the history included,
// and the writes of projects, prompts and versions are single statements
// (the read of an environment that holds a split is two: its row, then
// the versions of the split's entries, which never change);
// Activate, Deactivate, Rollback and a version created active in
// environments run in a transaction that locks the prompt's row (see
// Store.Activate), and a write with an idempotency key in a transaction
// with its record (see Idempotency). Lists page by keyset (id > after
// ORDER BY id LIMIT n) on indexes, never by OFFSET, so a deep page costs
// what the first costs; PLANS.md shows the query plans, and the module's
// BENCHMARKS.md the round trips of each method.
//
// It is tested on PostgreSQL 15.
//
// The prepared statements need a session per connection: behind PgBouncer,
// use session pooling, or transaction pooling with max_prepared_statements
// (PgBouncer 1.21 or later).
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/promptkit/prompts"
)

var _ prompts.Store = (*Store)(nil)

// DefaultSchema is the schema the tables live in unless WithSchema says
// otherwise.
const DefaultSchema = "prompts"

// errClosed is the cause of the internal error a Store returns once closed.
var errClosed = errors.New("sqlstore: store is closed")

// An Option configures a Store (New).
type Option interface{ applyStore(*Store) }

// A SharedOption configures a Store (New) or a Feed (NewFeed) alike.
type SharedOption interface {
	Option
	FeedOption
}

type storeOption func(*Store)

func (o storeOption) applyStore(s *Store) { o(s) }

type schemaOption string

func (o schemaOption) applyStore(s *Store) { s.schema = string(o) }
func (o schemaOption) applyFeed(f *Feed)   { f.schema = string(o) }

type loggerOption struct{ l *slog.Logger }

func (o loggerOption) applyStore(s *Store) { s.log = o.l }
func (o loggerOption) applyFeed(f *Feed)   { f.log = o.l }

// WithSchema sets the PostgreSQL schema that holds the store's tables
// (default "prompts"), or whose writes a Feed follows. It must be a plain
// identifier: a letter or underscore, then letters, digits and
// underscores, at most 63 bytes, not starting with "pg_". Migrate creates
// it.
func WithSchema(name string) SharedOption { return schemaOption(name) }

// WithClock sets the clock that stamps ids and timestamps (default
// time.Now). Time comes from this clock in the application, never from the
// database's now().
func WithClock(c prompts.Clock) Option { return storeOption(func(s *Store) { s.clock = c }) }

// WithLogger sets the logger for what a Store or a Feed does on its own:
// migrations applied, a version write retried under a lock, a feed lost
// and back. The default discards. Errors are returned, not logged.
func WithLogger(l *slog.Logger) SharedOption { return loggerOption{l} }

// Store is the PostgreSQL prompts.Store. Create it with New; it is safe for
// concurrent use.
type Store struct {
	db      *sqlx.DB
	clock   prompts.Clock
	log     *slog.Logger
	schema  string // as given
	lockKey int64  // Migrate's advisory lock
	channel string // where its writes notify (Channel)

	queries [numQueries]string                    // the statements, with the schema filled in
	stmts   [numQueries]atomic.Pointer[sqlx.Stmt] // prepared on first use
	closed  atomic.Bool
	writers writeQueue // this process's version writers, one at a time per prompt

	retention time.Duration // of events (WithEventRetention)
	waitMu    sync.Mutex
	waitCh    chan struct{} // closed by the next wake-up of WaitEvents; nil while none waits
}

// New returns a Store that keeps its data in db, a pool of connections to
// PostgreSQL through lib/pq that the caller owns (and closes). It does no
// I/O: run Migrate before the first call. It fails only on a nil db or an
// invalid option.
func New(db *sqlx.DB, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, errors.New("sqlstore: nil db")
	}
	s := &Store{db: db, schema: DefaultSchema, retention: prompts.DefaultEventRetention}
	for _, o := range opts {
		if o != nil {
			o.applyStore(s)
		}
	}
	if err := checkSchema(s.schema); err != nil {
		return nil, err
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	h := fnv.New64a()
	h.Write([]byte("github.com/promptkit/prompts/sqlstore.Migrate:" + s.schema))
	s.lockKey = int64(h.Sum64())
	s.channel = Channel(s.schema)
	r := strings.NewReplacer("{s}", pq.QuoteIdentifier(s.schema), "{channel}", pq.QuoteLiteral(s.channel),
		"{eventlock}", strconv.FormatInt(eventLockKey(s.schema), 10))
	for i, q := range queryText() {
		s.queries[i] = r.Replace(q)
	}
	return s, nil
}

// eventLockKey is the key of the advisory lock of the event log of the
// Store whose tables live in schema (see appendEvents).
func eventLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("github.com/promptkit/prompts/sqlstore.events:" + schema))
	return int64(h.Sum64())
}

// Channel is the PostgreSQL notification channel of the Store whose tables
// live in schema: every write that changes a prompt sends, in its own
// transaction, "<prompt id> <project id>" on it, and the removal of an
// environment " <project id> <environment>" (see Feed).
func Channel(schema string) string {
	h := fnv.New64a()
	h.Write([]byte(schema))
	return fmt.Sprintf("prompts_%016x", h.Sum64())
}

// checkSchema returns an error naming the problem when name is not a
// valid schema (validSchema).
func checkSchema(name string) error {
	if !validSchema(name) {
		return fmt.Errorf("sqlstore: schema %q is not a plain identifier (a letter or _, then letters, digits or _, at most 63 bytes, not pg_...)", name)
	}
	return nil
}

// validSchema reports whether name is an identifier that needs no quoting
// rules beyond the plain ones (letters may be upper case: quoting keeps
// them).
func validSchema(name string) bool {
	if name == "" || len(name) > 63 || strings.HasPrefix(strings.ToLower(name), "pg_") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Schema returns the name of the schema that holds the Store's tables.
func (s *Store) Schema() string { return s.schema }

// Ping reports whether the Store can serve, for a readiness probe: it reads
// the schema's table schema_migrations. A database that cannot be reached,
// or does not answer before ctx ends, is prompts.ErrUnavailable; a schema
// that is missing (dropped, say) or not migrated as far as this release
// needs is internal: Migrate mends it, waiting does not.
func (s *Store) Ping(ctx context.Context) error {
	_, err := bounded(ctx, func() (struct{}, error) { return struct{}{}, s.ping(ctx) })
	return err
}

func (s *Store) ping(ctx context.Context) error {
	if s.closed.Load() {
		return prompts.Internal(errClosed)
	}
	var version sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM `+s.quoted()+`.schema_migrations`).Scan(&version)
	if err != nil {
		return s.fail(ctx, err)
	}
	all, err := migrations()
	if err != nil {
		return prompts.Internal(err)
	}
	if need := all[len(all)-1].version; version.Int64 < int64(need) {
		return prompts.Internal(fmt.Errorf("sqlstore: schema %q is at migration %d, this release needs %d (run Store.Migrate)", s.schema, version.Int64, need))
	}
	return nil
}

// Close releases the statements the Store prepared. It does not close the
// pool, which belongs to the caller. Call it when no other call is in
// flight; later calls fail with an internal error wrapping errClosed. Close
// is idempotent.
func (s *Store) Close() error {
	s.closed.Store(true)
	var errs []error
	for i := range s.stmts {
		if st := s.stmts[i].Swap(nil); st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// stmt returns the prepared statement q, preparing it on first use. Racing
// first uses may each prepare it; one wins and the others close theirs.
// database/sql prepares it again, transparently, on each connection that
// runs it, new ones after a restart included.
func (s *Store) stmt(ctx context.Context, q query) (*sqlx.Stmt, error) {
	for {
		if st := s.stmts[q].Load(); st != nil {
			return st, nil
		}
		if s.closed.Load() {
			return nil, errClosed
		}
		st, err := s.db.PreparexContext(ctx, s.queries[q])
		if err != nil {
			return nil, err
		}
		if s.stmts[q].CompareAndSwap(nil, st) {
			if s.closed.Load() && s.stmts[q].CompareAndSwap(st, nil) {
				_ = st.Close()
				return nil, errClosed
			}
			return st, nil
		}
		_ = st.Close()
	}
}
