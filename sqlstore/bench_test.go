package sqlstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// The benchmarks need PostgreSQL, as the tests do (PROMPTS_TEST_DATABASE_URL);
// each makes its own schema, dropped at the end:
//
//	PROMPTS_TEST_DATABASE_URL=postgres://... go test ./sqlstore -run '^$' -bench . -benchmem

// seedActive returns a store holding one prompt with version 1 active in
// production.
func seedActive(b *testing.B) (*sqlstore.Store, prompts.Project, prompts.Prompt) {
	b.Helper()
	s := newSQLStore(b)
	proj, p := fixture(b, s)
	if _, err := s.CreateVersion(context.Background(), prompts.NewVersion{
		PromptID:     p.ID,
		Content:      "You are a helpful support agent. Greet {{name}} warmly.",
		Metadata:     `{"model":"gpt-5","temperature":0.2}`,
		Environments: []prompts.Environment{prompts.Production},
	}); err != nil {
		b.Fatal(err)
	}
	return s, proj, p
}

// BenchmarkGetActive is read 3 at the Store level: one round trip.
func BenchmarkGetActive(b *testing.B) {
	s, _, p := seedActive(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetActive(ctx, p.ID, prompts.Production); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetActiveSplit is BenchmarkGetActive of an environment that
// holds a split of two versions: two round trips, the row, then the
// versions of the split's entries.
func BenchmarkGetActiveSplit(b *testing.B) {
	s, _, p := seedActive(b)
	ctx := context.Background()
	if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "You are a helpful support agent. Greet {{name}} kindly."}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: split(1, 90, 2, 10)}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetActive(ctx, p.ID, prompts.Production); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetActiveWithDeadline is BenchmarkGetActive under a context
// with a deadline, as a server's request has.
func BenchmarkGetActiveWithDeadline(b *testing.B) {
	s, _, p := seedActive(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetActive(ctx, p.ID, prompts.Production); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetActiveByKey is how an application reads: by project and key.
func BenchmarkGetActiveByKey(b *testing.B) {
	s, proj, p := seedActive(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetActiveByKey(ctx, proj.ID, p.Key, prompts.Production); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateVersion writes versions of one prompt from one writer: the
// one-statement path.
func BenchmarkCreateVersion(b *testing.B) {
	s, _, p := seedActive(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkActivate points production of one prompt at its versions 1
// and 2 in turn: every call a change, in a transaction that locks the
// prompt's row.
func BenchmarkActivate(b *testing.B) {
	s, _, p := seedActive(b)
	ctx := context.Background()
	if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"}); err != nil {
		b.Fatal(err)
	}
	n := 1
	b.ReportAllocs()
	for b.Loop() {
		n = 3 - n
		if _, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(n)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateVersionParallel writes versions of one prompt from 8
// goroutines at once (whatever GOMAXPROCS is), each on a connection of its
// own: writers of one prompt queue on its row lock, which each holds until
// its commit is on disk. It fails on any error and checks afterwards that
// the numbers have no gap. versions/s is the throughput; retries/op the
// writes that found a larger id stored first and retried in a transaction
// (see Store.CreateVersion).
func BenchmarkCreateVersionParallel(b *testing.B) {
	const writers = 8 // the test pool holds 8 connections
	var retries countingHandler
	s := newSQLStore(b, sqlstore.WithLogger(slog.New(&retries)))
	_, p := fixture(b, s)
	ctx := context.Background()
	var (
		next   atomic.Int64
		failed atomic.Int64
		wg     sync.WaitGroup
	)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"}); err != nil {
					failed.Add(1)
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d of %d writes failed", failed.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "versions/s")
	b.ReportMetric(float64(retries.count.Load())/float64(b.N), "retries/op")
	if _, err := s.GetVersion(ctx, p.ID, b.N); err != nil {
		b.Fatalf("version %d: %v", b.N, err)
	}
	if _, err := s.GetVersion(ctx, p.ID, b.N+1); err == nil {
		b.Fatalf("version %d exists: a number was given twice", b.N+1)
	}
}

// BenchmarkCreateVersionParallelPrompts writes versions from 8 goroutines
// at once, each on a prompt of its own and a connection of its own: the
// writers meet at no prompt's lock, only where every write meets (the
// event log's counter). versions/s is the throughput.
func BenchmarkCreateVersionParallelPrompts(b *testing.B) {
	const writers = 8 // the test pool holds 8 connections
	s := newSQLStore(b)
	proj, _ := fixture(b, s)
	ctx := context.Background()
	ids := make([]string, writers)
	for i := range ids {
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: fmt.Sprintf("p%d", i), Name: "P"})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = p.ID
	}
	var (
		next   atomic.Int64
		failed atomic.Int64
		wg     sync.WaitGroup
	)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: id, Content: "c"}); err != nil {
					failed.Add(1)
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d of %d writes failed", failed.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "versions/s")
}

// listSize is the number of prompts BenchmarkListPrompts pages through.
const listSize = 100_000

// BenchmarkListPrompts reads a page of 100 prompts (the default) at the
// start of a list of 100,000, and deep inside it (the page after prompt
// 99,800), for all prompts and for one project's: keyset paging makes
// both the same index descent, so deep should cost what first costs.
func BenchmarkListPrompts(b *testing.B) {
	s := newSQLStore(b)
	ctx := context.Background()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "Big"})
	if err != nil {
		b.Fatal(err)
	}
	ids := seedPrompts(b, s, proj.ID, listSize)
	deep := ids[listSize-200]
	for _, bc := range []struct {
		name string
		f    prompts.PromptFilter
	}{
		{"all/first", prompts.PromptFilter{}},
		{"all/deep", prompts.PromptFilter{Page: prompts.Page{After: deep}}},
		{"project/first", prompts.PromptFilter{ProjectIDs: []string{proj.ID}}},
		{"project/deep", prompts.PromptFilter{ProjectIDs: []string{proj.ID}, Page: prompts.Page{After: deep}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page, more, err := s.ListPrompts(ctx, bc.f)
				if err != nil || len(page) != prompts.DefaultLimit || !more {
					b.Fatalf("%d prompts, more %v: %v", len(page), more, err)
				}
			}
		})
	}
}

// seedPrompts inserts n prompts with descriptions into the project in one
// statement, and analyzes the table, as PostgreSQL's autovacuum would soon
// after such a load. Their ids are ULIDs from prompts.NewID, increasing,
// as the Store would make them; it returns them in order.
func seedPrompts(b *testing.B, s *sqlstore.Store, projectID string, n int) []string {
	b.Helper()
	now := prompts.Clock(nil).Now()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = prompts.NewID(now)
	}
	q := pq.QuoteIdentifier(s.Schema())
	db := database(b)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `INSERT INTO `+q+`.prompts (id, project_id, key, name, description, created_at, revision)
SELECT t.id, $2, 'prompt-' || t.i, 'Prompt ' || t.i, 'What prompt ' || t.i || ' is for.', $3, $4
FROM unnest($1::text[]) WITH ORDINALITY AS t(id, i)`, pq.StringArray(ids), projectID, now, prompts.NextRevision(0, now)); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE `+q+`.prompts`); err != nil {
		b.Fatal(err)
	}
	return ids
}
