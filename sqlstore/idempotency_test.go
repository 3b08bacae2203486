package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/sqlstore"
)

// idemRequest is the write the processes of TestIdempotencyAcrossProcesses
// repeat.
func idemRequest(promptID string) prompts.NewVersion {
	return prompts.NewVersion{PromptID: promptID, Content: "once", Environments: []prompts.Environment{prompts.Production},
		Idempotency: prompts.Idempotency{Key: "retry-1", Scope: "ci", Request: "the same request"}}
}

// TestIdempotencyAcrossProcesses: several processes repeat one write with
// one idempotency key at once, as retries reaching replicas on one
// database would. One does the work; every other answers its result.
func TestIdempotencyAcrossProcesses(t *testing.T) {
	is := is.New(t)
	s := newSQLStore(t)
	_, p := fixture(t, s)
	const processes, writers = 3, 4
	var answers []string
	for _, out := range runChildren(t, "idempotency", s.Schema(), p.ID, processes, writers, nil) {
		answers = append(answers, strings.Fields(out)...)
	}
	is.Equal(len(answers), processes*writers)
	done := 0
	for _, a := range answers {
		id, how, _ := strings.Cut(a, ":")
		is.Equal(id, strings.SplitN(answers[0], ":", 2)[0]) // one version for all
		if how == "done" {
			done++
		}
	}
	is.Equal(done, 1) // done once, replayed by every other
	vs, _, err := s.ListVersions(context.Background(), p.ID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(vs), 1)
	ds, _, err := s.ListDeployments(context.Background(), prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(len(ds), 1) // one activation record

	// A repeat from this process, later, replays too.
	v, err := s.CreateVersion(context.Background(), idemRequest(p.ID))
	is.NoErr(err)
	is.True(v.Replayed)
	is.Equal(v.ID, vs[0].ID)
}

// runIdempotencyChild is a process of TestIdempotencyAcrossProcesses: it
// prints "<version id>:done" or "<version id>:replayed" per writer.
func runIdempotencyChild() int {
	env := func(k string) string { return os.Getenv("SQLSTORE_TEST_" + k) }
	s, writers, closeAll, err := openChild()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer closeAll()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed bool
	)
	for range writers {
		wg.Go(func() {
			v, err := s.CreateVersion(context.Background(), idemRequest(env("PROMPT")))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				failed = true
				return
			}
			how := "done"
			if v.Replayed {
				how = "replayed"
			}
			fmt.Printf("%s:%s\n", v.ID, how)
		})
	}
	wg.Wait()
	if failed {
		return 1
	}
	return 0
}

// Records past the retention are removed by later idempotent writes,
// without a goroutine: the table does not grow with keys no one repeats.
func TestExpiredIdempotencyRecordsAreRemoved(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newSQLStore(t, sqlstore.WithClock(clock))
	proj, _ := fixture(t, s)
	in := func(key string) prompts.NewPrompt {
		return prompts.NewPrompt{ProjectID: proj.ID, Key: "k-" + key, Name: "K", Idempotency: prompts.Idempotency{Key: key, Request: "r"}}
	}
	for _, key := range []string{"a", "b", "c"} {
		_, err := s.CreatePrompt(ctx, in(key))
		is.NoErr(err)
	}
	records := func() (n int) {
		is.NoErr(database(t).GetContext(ctx, &n, `SELECT count(*) FROM `+pq.QuoteIdentifier(s.Schema())+`.idempotency`))
		return n
	}
	is.Equal(records(), 3)
	mu.Lock()
	now = now.Add(prompts.IdempotencyRetention + time.Second)
	mu.Unlock()
	_, err := s.CreatePrompt(ctx, in("d"))
	is.NoErr(err)
	is.Equal(records(), 1) // only d's
}

// TestMigrateConvertsIdempotencyRecords: migration 6 converts the records
// the previous release kept (scope and key in the clear, the whole result
// as JSON) into ids; they still replay, and a record without a result is
// dropped.
func TestMigrateConvertsIdempotencyRecords(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, db, schema := migratedTo(t, 5)

	// Data and records as the previous release wrote them, an hour ago.
	const (
		projectID = "01JAAAAAAAAAAAAAAAAAAAAAAA"
		promptID  = "01JBBBBBBBBBBBBBBBBBBBBBBB"
		v1ID      = "01JDDDDDDDDDDDDDDDDDDDDDD1"
		v2ID      = "01JDDDDDDDDDDDDDDDDDDDDDD2"
	)
	created := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	p := prompts.Prompt{ID: promptID, ProjectID: projectID, Key: "greeting", Name: "Greeting", LatestVersionID: v2ID, CreatedAt: created, Revision: 3}
	v1 := prompts.PromptVersion{ID: v1ID, PromptID: promptID, VersionNumber: 1, Content: "one", CreatedAt: created, Variables: []string{}}
	v2 := prompts.PromptVersion{ID: v2ID, PromptID: promptID, VersionNumber: 2, Content: strings.Repeat("two ", 1000), CreatedAt: created, Variables: []string{}}
	tx := db.MustBegin()
	tx.MustExec(`SET LOCAL search_path TO ` + pq.QuoteIdentifier(schema))
	tx.MustExec(`INSERT INTO projects VALUES ($1, 'Old', 'old', '', false, $2)`, projectID, created)
	tx.MustExec(`INSERT INTO prompts (id, project_id, key, name, latest_version_id, version_count, created_at, revision)
		VALUES ($1, $2, $3, $4, $5, 2, $6, $7)`, promptID, projectID, p.Key, p.Name, v2ID, created, p.Revision)
	for _, v := range []prompts.PromptVersion{v1, v2} {
		tx.MustExec(`INSERT INTO versions (prompt_id, version_number, id, content, created_at, variables) VALUES ($1, $2, $3, $4, $5, '{}')`,
			promptID, v.VersionNumber, v.ID, v.Content, created)
	}
	tx.MustExec(`INSERT INTO environments VALUES ($1, 'production', 1, $2)`, promptID, created)
	record := func(scope, key, op, request string, result any) {
		var b []byte
		if result != nil {
			var err error
			b, err = json.Marshal(result)
			is.NoErr(err)
		}
		tx.MustExec(`INSERT INTO idempotency (scope, key, op, request, result, created_at) VALUES ($1, $2, $3, $4, $5, $6)`, scope, key, op, request, b, created)
	}
	// The results as the releases before kept them: the resources' JSON.
	type rolledBack struct {
		api.ActivePrompt
		Environment prompts.Environment `json:"environment"`
	}
	record("ci", "create-prompt", "create_prompt", "request of the prompt", api.FromPrompt(p))
	record("équipe", `"v" \ 2`, "create_version", "request of the version", api.FromVersionDetail(v2)) // a scope of more bytes than characters
	record("ci", "rollback", "rollback", "request of the rollback",
		rolledBack{api.FromActive(prompts.ActivePrompt{Prompt: p, ActiveVersion: &v1}), prompts.Production})
	record("ci", "unsaved", "create_prompt", "r", nil) // no result: names nothing
	is.NoErr(tx.Commit())

	is.NoErr(s.Migrate(ctx)) // migration 6 converts them
	var rows int
	is.NoErr(db.Get(&rows, `SELECT count(*) FROM `+pq.QuoteIdentifier(schema)+`.idempotency`))
	is.Equal(rows, 3) // the one without a result dropped
	var results int
	is.NoErr(db.Get(&results, `SELECT count(*) FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'idempotency' AND column_name IN ('result', 'scope', 'key')`, schema))
	is.Equal(results, 0) // no result kept, no key in the clear

	idem := func(scope, key, request string) prompts.Idempotency {
		return prompts.Idempotency{Key: key, Scope: scope, Request: request}
	}
	gotP, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: projectID, Key: "greeting", Name: "Greeting", Idempotency: idem("ci", "create-prompt", "request of the prompt")})
	is.NoErr(err)
	is.True(gotP.Replayed) // replays
	is.Equal(gotP.ID, promptID)
	gotV, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: promptID, Content: v2.Content, Idempotency: idem("équipe", `"v" \ 2`, "request of the version")})
	is.NoErr(err)
	is.True(gotV.Replayed)
	is.Equal(gotV.ID, v2ID)
	is.Equal(gotV.Content, v2.Content)
	gotA, err := s.Rollback(ctx, prompts.Rollback{PromptID: promptID, Environment: prompts.Production, Idempotency: idem("ci", "rollback", "request of the rollback")})
	is.NoErr(err)
	is.True(gotA.Replayed)
	is.Equal(gotA.ActiveVersion.ID, v1ID)
	_, err = s.Rollback(ctx, prompts.Rollback{PromptID: promptID, Environment: prompts.Production, Idempotency: idem("ci", "rollback", "another request")})
	is.True(errors.Is(err, prompts.ErrIdempotencyKeyReused)) // still tells requests apart
	vs, _, err := s.ListVersions(ctx, promptID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(vs), 2) // nothing written
	fresh, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: projectID, Key: "new", Name: "New", Idempotency: idem("ci", "unsaved", "r")})
	is.NoErr(err)
	is.True(!fresh.Replayed) // the dropped record's key names a new write
}

// TestKeyedRollbacksKeepTheTableSmall: 200 keyed rollbacks of a 1 MiB
// version grow the table idempotency (rows, indexes and TOAST) by a few
// hundred bytes each, not by the version.
func TestKeyedRollbacksKeepTheTableSmall(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := newSQLStore(t)
	_, p := fixture(t, s)
	for _, c := range []string{"a", "b"} {
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: randomText(1 << 20), Environments: []prompts.Environment{prompts.Production}, ChangeSummary: &c})
		is.NoErr(err)
	}
	size := func() (n int64) {
		is.NoErr(database(t).GetContext(ctx, &n, `SELECT pg_total_relation_size($1::regclass)`, pq.QuoteIdentifier(s.Schema())+".idempotency"))
		return n
	}
	before := size()
	for i := range 200 {
		_, err := s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production,
			Idempotency: prompts.Idempotency{Key: fmt.Sprint("undo-", i), Scope: "ci", Request: "req"}})
		is.NoErr(err)
	}
	after := size()
	t.Logf("200 keyed rollbacks: the table grew from %d to %d bytes", before, after)
	is.True(after-before <= 200<<10) // at most 1 KiB a record, pages and indexes included
}

// randomText returns n letters that do not compress.
func randomText(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = 'a' + b[i]%26
	}
	return string(b)
}
