// Package storetest is the conformance suite of prompts.Store: one function,
// Run, that checks every behaviour the Store contract (the doc comments of
// prompts.Store and of the input types' Validate methods) puts on a
// backend. A backend's own test is ten lines:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, clock prompts.Clock) prompts.Store {
//			return memstore.New(memstore.WithClock(clock))
//		})
//	}
//
// Run builds a fresh, empty Store for every subtest and hands it a fake
// clock that starts at a fixed time in a zone other than UTC and moves on by
// 1.234567 ms (not a whole number of microseconds) at every reading. The
// Store must stamp ids and timestamps with that clock, so the suite can
// check that they are in UTC and truncated to microseconds.
//
// metadata_ must come back as the same JSON value with every number in its
// own text: 1e400 as 1e400 and 1.0 as 1.0, not as re-encoded digits. Key
// order and white space may change. (PostgreSQL's jsonb re-encodes
// numbers; its json type, or text, keeps them.)
//
// A write repeated with its prompts.Idempotency must answer the resource
// the first write made or changed, read again by its id, as it is now: a
// version as it was made (versions never change), a prompt renamed since
// under its new name, a rolled-back environment as GetActive answers it
// now. And a Store must keep only what names that resource, so that a
// record costs at most MaxRecordSize bytes however large the resource;
// the suite measures that through StoredSizer, when the Store has it.
//
// A Store that reaches its data through an interface of its own, as
// package client does over HTTP, may declare the two things it keeps its
// own way: RecordedActor (the actor of every change is who it
// authenticates as, not the Actor named) and EventPromptsWithoutRevision
// (an event's prompt carries no revision). Run then checks those rules
// as that Store keeps them.
//
// A Store with ReadActive (prompts.ActiveReader) is checked for it: with
// any options, it answers what GetActive and GetActiveByKey answer, never
// stale (the store is there), a copy unless Shared, and a Shared answer
// that later writes leave as it was.
//
// A Store that keeps the log of its changes (prompts.EventLog) and
// webhooks with their outbox (prompts.WebhookStore), itself or under a
// wrapper that passes them through (prompts.EventLogOf), is checked for
// them too. Run builds one Store first to see which optional abilities
// it has (webhooks, API keys managed (prompts.KeyManager) or kept
// (prompts.KeyStore), StoredSizer, an event log for the events of
// splits), and leaves out the subtests of those it lacks rather than
// skipping them. They move the
// clock past prompts.DefaultEventRetention to see events go: the Store
// must keep them that long by default.
//
// Subtests are named after the behaviour they check, so a failure reads as
// the rule that broke; errors are checked by code (errors.Is with the
// prompts sentinels, errors.As for the invalid fields), never by message.
// The subtests run one after another, each with little data, except the
// ones whose rule needs volume (concurrent writers, the default page size).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/oklog/ulid/v2"
	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// Run runs the conformance suite. newStore must return a new, empty Store
// that takes the time from clock; it may use t to clean up (t.Cleanup) and
// to fail when the Store cannot be built.
func Run(t *testing.T, newStore func(t *testing.T, clock prompts.Clock) prompts.Store) {
	t.Helper()
	// The tests of an optional ability are run only for a Store that has
	// it, and otherwise not at all: none is skipped. A Store built once
	// tells which it has.
	has := abilities(newStore(t, newClock().Now))
	groups := []struct {
		needs ability
		tests []test
	}{
		{0, projectTests},
		{0, promptTests},
		{0, keyTests},
		{canManageKeys, keyManagerTests},
		{canKeepKeys, keyStoreTests},
		{0, updateTests},
		{0, versionTests},
		{0, metadataTests},
		{0, fieldRuleTests},
		{0, activationTests},
		{0, environmentTests},
		{0, revisionTests},
		{0, deploymentTests},
		{0, templateTests},
		{0, formatTests},
		{0, schemaTests},
		{0, partialTests},
		{0, lookupTests},
		{0, readTests},
		{0, pagingTests},
		{0, idTests},
		{0, timeTests},
		{0, copyTests},
		{0, contextTests},
		{0, idempotencyTests},
		{canSize, idempotencySizeTests},
		{0, eventTests},
		{0, splitTests},
		{canLogEvents, splitEventTests},
		{canKeepWebhooks, webhookTests},
	}
	for _, group := range groups {
		if has&group.needs != group.needs {
			continue
		}
		for _, tc := range group.tests {
			t.Run(tc.name, func(t *testing.T) {
				c := newClock()
				s := &fixture{Store: newStore(t, c.Now), t: t, clock: c}
				tc.run(t, s)
			})
		}
	}
}

// ability is a set of the optional abilities of a Store that groups of
// tests need.
type ability uint8

const (
	canManageKeys   ability = 1 << iota // prompts.KeyManager
	canKeepKeys                         // prompts.KeyStore
	canSize                             // StoredSizer
	canKeepWebhooks                     // prompts.WebhookStore
	canLogEvents                        // prompts.EventLog
)

// abilities returns the optional abilities of s.
func abilities(s prompts.Store) ability {
	var a ability
	if _, ok := keyManagerOf(s); ok {
		a |= canManageKeys
	}
	if _, ok := prompts.KeyStoreOf(s); ok {
		a |= canKeepKeys
	}
	if _, ok := s.(StoredSizer); ok {
		a |= canSize
	}
	if _, ok := prompts.WebhookStoreOf(s); ok {
		a |= canKeepWebhooks
	}
	if _, ok := prompts.EventLogOf(s); ok {
		a |= canLogEvents
	}
	return a
}

// test is one subtest: a behaviour and the function that checks it.
type test struct {
	name string
	run  func(t *testing.T, s *fixture)
}

// clockBase is the fake clock's first reading: not in UTC, and with
// nanoseconds that truncation to microseconds must drop.
var clockBase = time.Date(2026, 11, 21, 14, 19, 26, 123456789, time.FixedZone("UTC-8", -8*60*60))

// clockStep is how far the fake clock moves at every reading.
const clockStep = 1234567 * time.Nanosecond

// clock is the fake clock a Store under test reads. It is safe for
// concurrent use and remembers every reading.
type clock struct {
	mu       sync.Mutex
	next     time.Time
	still    bool // next stays where it is
	readings []time.Time
}

func newClock() *clock { return &clock{next: clockBase} }

// Now is the prompts.Clock handed to the Store.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.next
	if !c.still {
		c.next = c.next.Add(clockStep)
	}
	c.readings = append(c.readings, t)
	return t
}

// standStill makes every later reading at, as a clock that stopped (or
// was set back) would answer.
func (c *clock) standStill(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next, c.still = at, true
}

// jump moves the clock on by d.
func (c *clock) jump(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next = c.next.Add(d)
}

// mark returns a position in the readings, for since.
func (c *clock) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.readings)
}

// since returns the readings taken after mark.
func (c *clock) since(mark int) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.readings[mark:]...)
}

// fixture is the Store under test with the helpers the subtests share.
type fixture struct {
	prompts.Store
	t     *testing.T
	clock *clock
	n     int // counter for unique names
}

// project creates a project.
func (s *fixture) project() prompts.Project {
	is := is.New(s.t)
	is.Helper()
	s.n++
	p, err := s.CreateProject(s.t.Context(), prompts.NewProject{Name: "Project " + strconv.Itoa(s.n)})
	is.NoErr(err) // create project
	return p
}

// prompt creates a prompt with key in the project.
func (s *fixture) prompt(projectID, key string) prompts.Prompt {
	is := is.New(s.t)
	is.Helper()
	p, err := s.CreatePrompt(s.t.Context(), prompts.NewPrompt{ProjectID: projectID, Key: key, Name: "Prompt " + key})
	is.NoErr(err) // create prompt
	return p
}

// version creates a version with this content, active in envs.
func (s *fixture) version(promptID, content string, envs ...prompts.Environment) prompts.PromptVersion {
	is := is.New(s.t)
	is.Helper()
	v, err := s.CreateVersion(s.t.Context(), prompts.NewVersion{PromptID: promptID, Content: content, Environments: envs})
	is.NoErr(err) // create version
	return v
}

// versions creates n versions of the prompt, numbered 1 to n.
func (s *fixture) versions(promptID string, n int) []prompts.PromptVersion {
	is := is.New(s.t)
	is.Helper()
	out := make([]prompts.PromptVersion, n)
	for i := range out {
		v, err := s.CreateVersion(s.t.Context(), prompts.NewVersion{PromptID: promptID, Content: "content " + strconv.Itoa(i+1)})
		is.NoErr(err) // create version
		out[i] = v
	}
	return out
}

// active returns the id of the version active in env, "" for none.
func (s *fixture) active(promptID string, env prompts.Environment) string {
	is := is.New(s.t)
	is.Helper()
	a, err := s.GetActive(s.t.Context(), promptID, env)
	is.NoErr(err) // get active
	if a.ActiveVersion == nil {
		return ""
	}
	return a.ActiveVersion.ID
}

// snapshot returns the whole state of the store as text: every project
// with its environments, every prompt with its versions (change summaries included) and what is
// active in each environment. Comparing two snapshots proves that a call
// in between changed nothing.
func (s *fixture) snapshot() string {
	is := is.New(s.t)
	is.Helper()
	ctx := s.t.Context()
	all := prompts.Page{Limit: prompts.MaxLimit}
	var b []byte
	projects, _, err := s.ListProjects(ctx, prompts.ProjectFilter{Page: all})
	is.NoErr(err) // list projects for the snapshot
	envs := make(map[string][]prompts.ProjectEnvironment, len(projects))
	for _, p := range projects {
		b = append(b, projectText(p)...)
		b = append(b, '\n')
		l, err := s.ListEnvironments(ctx, p.ID)
		is.NoErr(err) // list environments for the snapshot
		for _, e := range l {
			b = append(b, fmt.Sprintf("  %s protected=%t %s\n", e.Name, e.Protected, e.CreatedAt.Format(time.RFC3339Nano))...)
		}
		envs[p.ID] = l
	}
	ps, _, err := s.ListPrompts(ctx, prompts.PromptFilter{Page: all})
	is.NoErr(err) // list prompts for the snapshot
	for _, p := range ps {
		b = append(b, promptText(p)...)
		b = append(b, '\n')
		vs, _, err := s.ListVersions(ctx, p.ID, all)
		is.NoErr(err) // list versions for the snapshot
		for _, v := range vs {
			b = append(b, versionText(v)...)
			b = append(b, '\n')
		}
		for _, env := range prompts.EnvironmentNames(envs[p.ProjectID]) {
			a, err := s.GetActive(ctx, p.ID, env)
			is.NoErr(err) // get active for the snapshot
			b = append(b, activeText(a)...)
			b = append(b, '\n')
		}
	}
	return string(b)
}

// projectText, promptText, versionText and activeText return every field
// of a value as text, for comparisons that show what differs: the
// interface's JSON of it (versions with their change summary) and, for
// prompts, the revision and, for reads of an environment, the
// environment.
func projectText(p prompts.Project) string { return text(api.FromProject(p)) }

func promptText(p prompts.Prompt) string {
	return text(api.FromPrompt(p)) + " revision " + strconv.FormatInt(p.Revision, 10)
}

func versionText(v prompts.PromptVersion) string { return text(api.FromVersionDetail(v)) }

func activeText(a prompts.ActivePrompt) string {
	active := "null"
	if a.ActiveVersion != nil {
		active = versionText(*a.ActiveVersion)
	}
	t := promptText(a.Prompt) + " in " + string(a.Environment) + ": " + active
	if a.Split != nil || a.SplitVersions != nil {
		// A split: its entries (ids, numbers, weights) and their versions.
		t += " split " + fmt.Sprint(a.Split)
		for _, v := range a.SplitVersions {
			t += " " + versionText(v)
		}
	}
	return t
}

// invalid checks that err is ErrInvalid naming exactly these fields, in
// this order.
func (s *fixture) invalid(err error, fields ...string) {
	is := is.New(s.t)
	is.Helper()
	is.True(errors.Is(err, prompts.ErrInvalid)) // the error is ErrInvalid
	is.Equal(fieldNames(err), fields)           // the invalid fields
}

// notFound checks that err is ErrNotFound; it logs what was looked up
// when it is not.
func (s *fixture) notFound(err error, what string) {
	is := is.New(s.t)
	is.Helper()
	if !errors.Is(err, prompts.ErrNotFound) {
		s.t.Logf("looking up %q: got %v", what, err)
	}
	is.True(errors.Is(err, prompts.ErrNotFound)) // not found
}

// fieldNames returns the names of the invalid fields err carries.
func fieldNames(err error) []string {
	var e *prompts.Error
	if !errors.As(err, &e) {
		return nil
	}
	var names []string
	for _, f := range e.Fields {
		names = append(names, f.Field)
	}
	return names
}

// stamped checks that t came from the fake clock after mark: one of its
// readings in UTC truncated to microseconds.
func (s *fixture) stamped(mark int, t time.Time) {
	is := is.New(s.t)
	is.Helper()
	is.Equal(t.Location(), time.UTC) // timestamps are in UTC
	is.Equal(t.Nanosecond()%1000, 0) // timestamps are truncated to microseconds
	is.True(s.readAt(mark, t.Equal)) // the timestamp is a reading of the store's clock
}

// idStamped checks that the time in the ULID id is the millisecond of a
// reading of the fake clock after mark.
func (s *fixture) idStamped(mark int, id string) {
	is := is.New(s.t)
	is.Helper()
	u, err := ulid.ParseStrict(id)
	is.NoErr(err) // the id is a ULID
	ms := func(t time.Time) bool { return u.Time() == uint64(t.UnixMilli()) }
	is.True(s.readAt(mark, ms)) // the id's time is a reading of the store's clock
}

// readAt reports whether a reading of the clock after mark, in UTC and
// truncated to microseconds, matches.
func (s *fixture) readAt(mark int, match func(time.Time) bool) bool {
	for _, r := range s.clock.since(mark) {
		if match(r.UTC().Truncate(time.Microsecond)) {
			return true
		}
	}
	return false
}

// cancelled returns a context that has been cancelled.
func cancelled(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

// succ returns the id just after id: well-formed, and sorting between id
// and any later id of another millisecond or entropy.
func succ(id string) string {
	u := ulid.MustParseStrict(id)
	for i := len(u) - 1; i >= 0; i-- {
		u[i]++
		if u[i] != 0 {
			break
		}
	}
	return u.String()
}

// pred returns the id just before id.
func pred(id string) string {
	u := ulid.MustParseStrict(id)
	for i := len(u) - 1; i >= 0; i-- {
		u[i]--
		if u[i] != 0xff {
			break
		}
	}
	return u.String()
}

// Well-formed ids that sort before and after every id a store makes.
const (
	minID = "00000000000000000000000000"
	maxID = "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"
)

// unknownID is a well-formed id that no store made.
const unknownID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"

// malformedIDs returns ids that are not well-formed, most made from a real
// one: lower case, one character short, one too many, a space, overflowing,
// junk. The empty id is not among them: where an id is a field of an
// input, empty is a missing required field.
func malformedIDs(real string) []string {
	return []string{
		strings.ToLower(real),
		real[:25],
		real + "0",
		" " + real[1:],
		"8" + real[1:],
		"not-an-id",
	}
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// deactivate points env of the prompt at no version, with no actor, reason
// or precondition.
func (s *fixture) deactivate(ctx context.Context, promptID string, env prompts.Environment) error {
	_, err := s.Deactivate(ctx, prompts.Deactivation{PromptID: promptID, Environment: env})
	return err
}

// versionID returns the id of the prompt's version number n.
func (s *fixture) versionID(promptID string, n int) string {
	is := is.New(s.t)
	is.Helper()
	v, err := s.GetVersion(s.t.Context(), promptID, n)
	is.NoErr(err) // get version
	return v.ID
}

// text returns the JSON of v, one of package api's types: what the HTTP
// interface sends of it.
func text(v any) string {
	b, err := api.Marshal(v)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	return string(b)
}
