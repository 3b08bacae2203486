package storetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// StoredSizer is an optional interface of the Store that Run's newStore
// returns: StoredSize reports how many bytes the Store keeps, all its data
// or only its idempotency records (a file's size, the bytes of a table's
// rows). With it, Run checks that an idempotency record costs at most
// MaxRecordSize, whatever the size of the result it replays, by comparing
// what writes with a key add with what the same writes without one add.
// Without it, Run leaves those subtests out.
type StoredSizer interface {
	StoredSize(ctx context.Context) (int64, error)
}

// MaxRecordSize is the most an idempotency record may cost a Store, in
// bytes.
const MaxRecordSize = 1 << 10

// size returns what the Store keeps; only tests of idempotencySizeTests,
// which Run leaves out for a Store that is no StoredSizer, call it.
func (s *fixture) size() int64 {
	s.t.Helper()
	sz, ok := s.Store.(StoredSizer)
	if !ok {
		s.t.Fatal("storetest: a test of idempotencySizeTests ran on a Store that does not report its size (storetest.StoredSizer)")
	}
	n, err := sz.StoredSize(s.t.Context())
	if err != nil {
		s.t.Fatalf("stored size: %v", err)
	}
	return n
}

// bigContent returns 1 MiB of letters that do not compress, different for
// each seed: a Store that compresses what it keeps still keeps it.
func bigContent(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	return string(b)
}

// idem is an Idempotency in the scope "ci".
func idem(key, request string) prompts.Idempotency {
	return prompts.Idempotency{Key: key, Scope: "ci", Request: request}
}

// countVersions counts the versions of a prompt.
func (s *fixture) countVersions(promptID string) int {
	vs, _, err := s.ListVersions(s.t.Context(), promptID, prompts.Page{Limit: prompts.MaxLimit})
	if err != nil {
		s.t.Fatalf("list versions: %v", err)
	}
	return len(vs)
}

// countPrompts counts the prompts of a project.
func (s *fixture) countPrompts(projectID string) int {
	ps, _, err := s.ListPrompts(s.t.Context(), prompts.PromptFilter{ProjectIDs: []string{projectID}, Page: prompts.Page{Limit: prompts.MaxLimit}})
	if err != nil {
		s.t.Fatalf("list prompts: %v", err)
	}
	return len(ps)
}

var idempotencyTests = []test{
	{"a repeated create with the same idempotency answers the first result and writes nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		in := prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K", Idempotency: idem("create-1", "req-a")}
		first, err := s.CreatePrompt(ctx, in)
		is.NoErr(err)            // create
		is.True(!first.Replayed) // the first is no replay
		again, err := s.CreatePrompt(ctx, in)
		is.NoErr(err)                                  // the repeat is no error (not a key taken)
		is.True(again.Replayed)                        // but a replay
		again.Replayed = false                         //
		is.Equal(promptText(again), promptText(first)) // of the same prompt
		is.Equal(s.countPrompts(proj.ID), 1)           // one prompt

		vin := prompts.NewVersion{PromptID: first.ID, Content: "c", Environments: []prompts.Environment{prompts.Production}, Idempotency: idem("version-1", "req-b")}
		v1, err := s.CreateVersion(ctx, vin)
		is.NoErr(err) // create version
		rev := s.revision(first.ID)
		v2, err := s.CreateVersion(ctx, vin)
		is.NoErr(err) // repeat
		is.True(v2.Replayed)
		is.Equal(v2.ID, v1.ID)
		is.Equal(v2.VersionNumber, 1)
		is.Equal(versionText(v2), versionText(v1))
		is.Equal(s.countVersions(first.ID), 1)                        // one version
		is.Equal(s.revision(first.ID), rev)                           // the repeat changed nothing
		is.Equal(len(s.deployments(first.ID, prompts.Production)), 1) // one record
	}},
	{"a replay answers the first result byte for byte, metadata with <, > and & included", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		in := prompts.NewVersion{PromptID: p.ID, Content: "<b>&</b>", Metadata: `{"html":"<b>&amp;</b>","sep":" "}`, Idempotency: idem("html", "req")}
		first, err := s.CreateVersion(ctx, in)
		is.NoErr(err)
		again, err := s.CreateVersion(ctx, in)
		is.NoErr(err)
		is.True(again.Replayed)
		is.Equal(versionText(again), versionText(first))
		stored, err := s.GetVersion(ctx, p.ID, 1)
		is.NoErr(err)
		is.Equal(stored.Metadata, first.Metadata) // as stored
	}},
	{"a repeated rollback rolls back once", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		s.version(p.ID, "one", prompts.Production)
		two := s.version(p.ID, "two", prompts.Production)
		s.version(p.ID, "three", prompts.Production)
		in := prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Idempotency: idem("undo", "req")}
		first, err := s.Rollback(ctx, in)
		is.NoErr(err) // rollback
		is.Equal(first.ActiveVersion.VersionNumber, 2)
		again, err := s.Rollback(ctx, in)
		is.NoErr(err) // repeat
		is.True(again.Replayed)
		is.Equal(again.ActiveVersion.VersionNumber, 2)
		is.Equal(s.active(p.ID, prompts.Production), two.ID) // not rolled back twice
		is.Equal(len(s.deployments(p.ID, prompts.Production)), 4)
	}},
	{"the same key with another request is refused and changes nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K", Idempotency: idem("key", "req-a")})
		is.NoErr(err)
		before := s.snapshot()
		_, err = s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "other", Name: "K", Idempotency: idem("key", "req-b")})
		is.True(errors.Is(err, prompts.ErrIdempotencyKeyReused)) // another request
		is.Equal(prompts.ErrorCode(err), prompts.CodeIdempotencyKeyReused)
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: idem("key", "req-a")})
		is.True(errors.Is(err, prompts.ErrIdempotencyKeyReused)) // another kind of write, same request
		is.Equal(s.snapshot(), before)                           // nothing changed
	}},
	{"idempotency keys are scoped", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		for _, scope := range []string{"ci", "dashboard", ""} {
			v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: prompts.Idempotency{Key: "same", Scope: scope, Request: "r"}})
			is.NoErr(err)        // one write per scope
			is.True(!v.Replayed) // none a replay
		}
		is.Equal(s.countVersions(p.ID), 3)
	}},
	{"a failed write keeps no record: the key may be used again", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		in := prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Idempotency: idem("undo", "req")}
		_, err := s.Rollback(ctx, in)
		is.Equal(prompts.ErrorCode(err), prompts.CodeConflict) // nothing to roll back
		one := s.version(p.ID, "one", prompts.Production)
		s.version(p.ID, "two", prompts.Production)
		a, err := s.Rollback(ctx, in)
		is.NoErr(err)        // the same key, now that it can succeed
		is.True(!a.Replayed) // done, not replayed
		is.Equal(s.active(p.ID, prompts.Production), one.ID)
	}},
	{"concurrent repeats do the work once", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		const n = 16
		var wg sync.WaitGroup
		ids := make([]string, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: idem("race", "req")})
				ids[i], errs[i] = v.ID, err
			})
		}
		wg.Wait()
		for i := range n {
			is.NoErr(errs[i])        // every repeat answered
			is.Equal(ids[i], ids[0]) // with the one version
		}
		is.Equal(s.countVersions(p.ID), 1)
	}},
	{"a record lasts the retention, then the key names a new write", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		first, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: idem("k", "req")})
		is.NoErr(err)
		s.clock.jump(prompts.IdempotencyRetention - time.Minute)
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: idem("k", "req")})
		is.NoErr(err)
		is.True(v.Replayed) // within the retention: a replay
		is.Equal(v.ID, first.ID)
		s.clock.jump(2 * time.Minute)
		v, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "other", Idempotency: idem("k", "another request")})
		is.NoErr(err)        // after it, the key is free
		is.True(!v.Replayed) // and names a new write
		is.Equal(v.VersionNumber, 2)
	}},
	{"a record past the retention is not replayed, whatever order the records were made in", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: idem("newer", "req")})
		is.NoErr(err)
		s.clock.standStill(clockBase.Add(-2 * time.Hour)) // a clock set back: this record is older
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: idem("older", "req")})
		is.NoErr(err)
		s.clock.standStill(clockBase.Add(prompts.IdempotencyRetention - time.Hour))
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: idem("older", "another request")})
		is.NoErr(err)        // past its retention: the key is free
		is.True(!v.Replayed) // a new write
		v, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: idem("newer", "req")})
		is.NoErr(err)
		is.True(v.Replayed) // within its retention: replayed
	}},
	{"a replay answers the resource the first write made, read again by its id, after it changed", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		pin := prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K", Idempotency: idem("create", "req")}
		first, err := s.CreatePrompt(ctx, pin)
		is.NoErr(err)
		renamed, err := s.UpdatePrompt(ctx, first.ID, prompts.PromptUpdate{Key: prompts.Some("renamed"), Name: prompts.Some("Renamed")})
		is.NoErr(err) // the prompt changes after its create
		again, err := s.CreatePrompt(ctx, pin)
		is.NoErr(err)
		is.True(again.Replayed)                          // a replay
		again.Replayed = false                           //
		is.Equal(promptText(again), promptText(renamed)) // of the same prompt, as it is now
		is.Equal(s.countPrompts(proj.ID), 1)             // and no second prompt under the old key

		vin := prompts.NewVersion{PromptID: first.ID, Content: "one", Environments: []prompts.Environment{prompts.Production}, Idempotency: idem("version", "req")}
		v1, err := s.CreateVersion(ctx, vin)
		is.NoErr(err)
		v2 := s.version(first.ID, "two", prompts.Production) // the latest moves on
		v, err := s.CreateVersion(ctx, vin)
		is.NoErr(err)
		is.True(v.Replayed)
		is.Equal(v.ID, v1.ID)                     // the same version
		is.Equal(versionText(v), versionText(v1)) // which never changes
		is.Equal(s.countVersions(first.ID), 2)    // none written
		is.Equal(s.active(first.ID, prompts.Production), v2.ID)

		rin := prompts.Rollback{PromptID: first.ID, Environment: prompts.Production, Idempotency: idem("undo", "req")}
		rolled, err := s.Rollback(ctx, rin)
		is.NoErr(err)
		is.Equal(rolled.ActiveVersion.ID, v1.ID) // back to one
		_, err = s.Activate(ctx, prompts.Activation{PromptID: first.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2)})
		is.NoErr(err) // and on to two again
		records := len(s.deployments(first.ID, prompts.Production))
		a, err := s.Rollback(ctx, rin)
		is.NoErr(err)
		is.True(a.Replayed)                                        // a replay: not rolled back again
		is.Equal(a.ID, first.ID)                                   // of the same prompt and environment
		is.Equal(a.Environment, prompts.Production)                //
		now, err := s.GetActive(ctx, first.ID, prompts.Production) //
		is.NoErr(err)                                              //
		a.Replayed = false                                         //
		is.Equal(activeText(a), activeText(now))                   // as a read of it answers now: one state of the prompt
		is.Equal(s.active(first.ID, prompts.Production), v2.ID)    // which the replay left as it was
		is.Equal(len(s.deployments(first.ID, prompts.Production)), records)
	}},
	{"many keys", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		for i := range 5 {
			for range 2 {
				_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: idem("key-"+strconv.Itoa(i), "req")})
				is.NoErr(err)
			}
		}
		is.Equal(s.countVersions(p.ID), 5)
	}},
	{"a bad idempotency key is invalid input", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		for _, bad := range []prompts.Idempotency{
			{Key: string(make([]byte, prompts.MaxIdempotencyKey+1))},
			{Key: "tab\there"},
			{Key: "caf\u00e9"},
			{Scope: "ci"},
		} {
			_, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K", Idempotency: bad})
			is.Equal(prompts.ErrorCode(err), prompts.CodeInvalid)
		}
		is.Equal(s.countPrompts(proj.ID), 0)
	}},
}

// idempotencySizeTests need a StoredSizer.
var idempotencySizeTests = []test{
	{"an idempotency record costs at most 1 KiB, whatever the size of the version it replays", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		// Large versions first, so that a Store that compacts what it keeps
		// when it reaches a multiple of its data (as memstore's file does)
		// does not compact between the measures; and when a Store that
		// counts its data (not only its idempotency records) keeps less
		// after a write than its content, it compacted: measure again.
		for i := range 3 {
			s.version(p.ID, bigContent(uint64(i)))
		}
		var (
			plain, keyed int64
			in           prompts.NewVersion
			v            prompts.PromptVersion
		)
		for i := uint64(0); ; i++ {
			before := s.size()
			s.version(p.ID, bigContent(3+2*i))
			plain = s.size() - before // what a version costs without a key
			in = prompts.NewVersion{PromptID: p.ID, Content: bigContent(4 + 2*i), Idempotency: idem("big "+strconv.FormatUint(i, 10), "req")}
			var err error
			v, err = s.CreateVersion(ctx, in)
			is.NoErr(err)
			keyed = s.size() - before - plain // what the same with a key costs
			compacted := plain < 0 || keyed < 0 || plain > 0 && (plain < 1<<20 || keyed < 1<<20)
			if !compacted || i == 3 {
				break
			}
		}
		t.Logf("a version of 1 MiB costs %d bytes without a key, %d with one", plain, keyed)
		if keyed-plain > MaxRecordSize {
			t.Errorf("a version of 1 MiB costs %d bytes more with an idempotency key than without (%d): want at most %d", keyed-plain, plain, MaxRecordSize)
		}
		again, err := s.CreateVersion(ctx, in)
		is.NoErr(err)
		is.True(again.Replayed)
		is.Equal(again.ID, v.ID)
		is.Equal(again.Content, in.Content) // the whole version, read again
	}},
	{"keyed rollbacks of a large version cost at most 1 KiB each more than rollbacks without a key", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		s.version(p.ID, bigContent(1), prompts.Production)
		s.version(p.ID, bigContent(2), prompts.Production)
		rollback := func(in prompts.Rollback) {
			t.Helper()
			_, err := s.Rollback(ctx, in)
			is.NoErr(err) // rollback
		}
		const plainN, keyedN = 20, 200
		before := s.size()
		for range plainN {
			rollback(prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
		}
		plain := s.size() - before
		before = s.size()
		for i := range keyedN {
			rollback(prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Idempotency: idem("undo-"+strconv.Itoa(i), "req")})
		}
		keyed := s.size() - before
		t.Logf("%d rollbacks without a key cost %d bytes, %d with keys %d", plainN, plain, keyedN, keyed)
		if extra := keyed - plain*keyedN/plainN; extra > keyedN*MaxRecordSize {
			t.Errorf("%d keyed rollbacks of a 1 MiB version cost %d bytes, %d more than without keys: want at most %d", keyedN, keyed, extra, keyedN*MaxRecordSize)
		}
		a, err := s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Idempotency: idem("undo-0", "req")})
		is.NoErr(err)
		is.True(a.Replayed)                           // the first key still replays
		is.Equal(len(a.ActiveVersion.Content), 1<<20) // with the whole version, read again
	}},
}
