package memstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// testdata/journal-v1.data was written by the release before idempotency
// records kept ids instead of whole results: a project, the prompt
// "greeting" created with the key create-prompt, version 1 active in
// production, version 2 created active there with the key create-version,
// and a rollback to version 1 with the key rollback, every key in the
// scope "ci", at 2026-11-21T10:00:00Z. Its records still replay, and the
// compaction at Open rewrites them small.
func TestFileStoreReadsOldIdempotencyRecords(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	old, err := os.ReadFile("testdata/journal-v1.data")
	is.NoErr(err)
	path := filepath.Join(t.TempDir(), "prompts.data")
	is.NoErr(os.WriteFile(path, old, 0o600))
	clock := func() time.Time { return time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC) } // within the records' retention
	s, err := memstore.Open(path, memstore.WithClock(clock))
	is.NoErr(err) // the old journal opens
	defer func() { s.Close() }()

	projects, _, err := s.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	is.Equal(len(projects), 1)
	proj := projects[0]
	idem := func(key, request string) prompts.Idempotency {
		return prompts.Idempotency{Key: key, Scope: "ci", Request: request}
	}
	two := "TWO " + strings.Repeat("2", 2000)
	replay := func(s *memstore.Store) {
		t.Helper()
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "greeting", Name: "Greeting", Idempotency: idem("create-prompt", "request-of-the-prompt")})
		is.NoErr(err)
		is.True(p.Replayed) // the old record of the prompt replays
		is.Equal(p.Key, "greeting")
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: two, Environments: []prompts.Environment{prompts.Production},
			Idempotency: idem("create-version", "request-of-the-version")})
		is.NoErr(err)
		is.True(v.Replayed) // so does the old record of the version
		is.Equal(v.VersionNumber, 2)
		is.Equal(v.Content, two)
		a, err := s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Idempotency: idem("rollback", "request-of-the-rollback")})
		is.NoErr(err)
		is.True(a.Replayed) // and of the rollback
		is.Equal(a.ActiveVersion.VersionNumber, 1)
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Idempotency: idem("rollback", "another request")})
		is.True(errors.Is(err, prompts.ErrIdempotencyKeyReused)) // an old key with another request
		vs, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
		is.NoErr(err)
		is.Equal(len(vs), 2) // nothing written
		ds, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
		is.NoErr(err)
		is.Equal(len(ds), 3)
	}
	replay(s)

	now, err := os.ReadFile(path)
	is.NoErr(err)
	is.Equal(bytes.Count(old, []byte(`"rec":`)), 3)        // the old file holds three old records
	is.Equal(bytes.Count(now, []byte(`"rec":`)), 0)        // rewritten at Open
	is.Equal(bytes.Count(now, []byte(`"record":`)), 3)     // in the new form
	is.True(len(now) < len(old)-2*len(two))                // without the results they held
	is.True(!bytes.Contains(now, []byte("create-prompt"))) // keys are kept as digests

	is.NoErr(s.Close())
	s, err = memstore.Open(path, memstore.WithClock(clock))
	is.NoErr(err) // and the rewritten file opens
	replay(s)     // with the same records
}

// 200 keyed rollbacks of a 1 MiB version keep a few hundred bytes each in
// memory, not the version.
func TestKeyedRollbacksKeepMemoryBounded(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := memstore.New()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	for _, c := range []string{"a", "b"} {
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: strings.Repeat(c, 1<<20), Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := range 200 {
		_, err := s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production,
			Idempotency: prompts.Idempotency{Key: "undo-" + strconv.Itoa(i), Request: "req"}})
		is.NoErr(err)
	}
	after := heap()
	t.Logf("200 keyed rollbacks: %d bytes of heap", int64(after)-int64(before))
	is.True(after < before+2<<20) // far below one version of 1 MiB per rollback
	runtime.KeepAlive(s)
}
