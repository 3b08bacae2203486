package memstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// seedActive returns a store holding one prompt with a description and
// version 1 (with a change summary and metadata) active in production.
func seedActive(b *testing.B) (*memstore.Store, prompts.Prompt) {
	b.Helper()
	ctx := context.Background()
	s := memstore.New()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	desc := "Greets a customer."
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "Greeting", Description: &desc})
	if err != nil {
		b.Fatal(err)
	}
	summary := "first"
	if _, err := s.CreateVersion(ctx, prompts.NewVersion{
		PromptID:      p.ID,
		Content:       "You are a helpful support agent. Greet {{name}} warmly.",
		ChangeSummary: &summary,
		Metadata:      `{"model":"gpt-5","temperature":0.2}`,
		Environments:  []prompts.Environment{prompts.Production},
	}); err != nil {
		b.Fatal(err)
	}
	return s, p
}

// BenchmarkGetActive is read 3 at the Store level: a prompt with its
// production version, description and change summary copied out.
func BenchmarkGetActive(b *testing.B) {
	s, p := seedActive(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		a, err := s.GetActive(ctx, p.ID, prompts.Production)
		if err != nil || a.ActiveVersion == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetActiveParallel is read 3 from every core at once: reads share
// the lock.
func BenchmarkGetActiveParallel(b *testing.B) {
	s, p := seedActive(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.GetActive(ctx, p.ID, prompts.Production); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkGetActiveByKey is the lookup an application makes by project
// and key.
func BenchmarkGetActiveByKey(b *testing.B) {
	s, p := seedActive(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetActiveByKey(ctx, p.ProjectID, p.Key, prompts.Production); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadActiveShared is the read httpapi makes: by key, shared
// (no copy).
func BenchmarkReadActiveShared(b *testing.B) {
	s, p := seedActive(b)
	ctx := context.Background()
	q := prompts.ActiveQuery{ProjectID: p.ProjectID, Key: p.Key, Environment: prompts.Production, Shared: true}
	b.ReportAllocs()
	for b.Loop() {
		if a, _, err := s.ReadActive(ctx, q); err != nil || a.ActiveVersion == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadActiveSplit is BenchmarkReadActiveShared of a prompt whose
// production holds a split of two versions: without a subject (the first
// entry's version), with one (picked), and copied out (GetActive).
func BenchmarkReadActiveSplit(b *testing.B) {
	s, p := seedActive(b)
	ctx := context.Background()
	if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "You are a helpful support agent. Greet {{name}}."}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production,
		Split: prompts.Split{{VersionNumber: 1, Weight: 90}, {VersionNumber: 2, Weight: 10}}}); err != nil {
		b.Fatal(err)
	}
	q := prompts.ActiveQuery{ProjectID: p.ProjectID, Key: p.Key, Environment: prompts.Production, Shared: true}
	read := func(b *testing.B, q prompts.ActiveQuery) {
		b.ReportAllocs()
		for b.Loop() {
			if a, _, err := s.ReadActive(ctx, q); err != nil || a.ActiveVersion == nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("shared", func(b *testing.B) { read(b, q) })
	q.Subject = "user-42"
	b.Run("shared-subject", func(b *testing.B) { read(b, q) })
	b.Run("get-active", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.GetActive(ctx, p.ID, prompts.Production); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCreateVersion writes versions of one prompt, serially and with
// parallel writers.
func BenchmarkCreateVersion(b *testing.B) {
	in := func(id string) prompts.NewVersion {
		return prompts.NewVersion{PromptID: id, Content: "You are a helpful support agent.", Metadata: `{"temperature":0.2}`}
	}
	b.Run("serial", func(b *testing.B) {
		s, p := seedActive(b)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.CreateVersion(ctx, in(p.ID)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel-8", func(b *testing.B) {
		s, p := seedActive(b)
		ctx := context.Background()
		b.ReportAllocs()
		b.SetParallelism(4) // 4 x GOMAXPROCS(2) = 8 writers
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.CreateVersion(ctx, in(p.ID)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkWrites measures writes (a new version of one of 32 prompts)
// with 1 and 32 concurrent writers, in memory (New) and on a file (Open):
// on a file every write waits for its fsync, and concurrent writers share
// them (group commit). BENCHMARKS.md reports the ratios.
func BenchmarkWrites(b *testing.B) {
	for _, kind := range []string{"memory", "file"} {
		for _, writers := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/writers=%d", kind, writers), func(b *testing.B) {
				ctx := context.Background()
				s := memstore.New()
				if kind == "file" {
					var err error
					if s, err = memstore.Open(filepath.Join(b.TempDir(), "bench.data")); err != nil {
						b.Fatal(err)
					}
					defer s.Close()
				}
				proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "Bench"})
				if err != nil {
					b.Fatal(err)
				}
				ids := make(chan string, 32)
				for i := range 32 {
					p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: fmt.Sprintf("p%d", i), Name: "P"})
					if err != nil {
						b.Fatal(err)
					}
					ids <- p.ID
				}
				in := prompts.NewVersion{Content: "You are a helpful support agent. Greet {{name}} warmly."}
				b.ResetTimer()
				if writers == 1 {
					in.PromptID = <-ids
					for b.Loop() {
						if _, err := s.CreateVersion(ctx, in); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism((writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
					b.RunParallel(func(pb *testing.PB) {
						in := in
						in.PromptID = <-ids
						for pb.Next() {
							if _, err := s.CreateVersion(ctx, in); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
			})
		}
	}
}

// BenchmarkOpen100k opens a data file of 100,000 versions (100 prompts of
// 1,000 versions of about 450 bytes, with their events), as the writes
// left it: compacted when it grew, with the records of the writes since.
// BENCHMARKS.md reports it.
func BenchmarkOpen100k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "100k.data")
	ctx := context.Background()
	s, err := memstore.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	content := strings.Repeat("You are a helpful support agent. ", 12) + "Greet {{name}} warmly."
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Go(func() {
			p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: fmt.Sprintf("support/p%d", i), Name: "P"})
			if err != nil {
				errs <- err
				return
			}
			summary := "a change"
			for range 1000 {
				if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, ChangeSummary: &summary, Metadata: `{"model":"gpt-5","temperature":0.2}`}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		s, err := memstore.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(info.Size())/(1<<20), "MiB")
}

// BenchmarkClaimNoneDue is the claim an idle dispatcher makes at each
// poll (a second by default) with 3,000 retries pending, none due: its
// cost over a second is its share of a core.
func BenchmarkClaimNoneDue(b *testing.B) {
	ctx := context.Background()
	s := memstore.New()
	if _, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://hooks.example.com/", Secret: prompts.NewWebhookSecret()}); err != nil {
		b.Fatal(err)
	}
	for i := range 3000 {
		if _, err := s.CreateProject(ctx, prompts.NewProject{Name: fmt.Sprintf("P%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now()
	for {
		ds, err := s.ClaimDeliveries(ctx, now, prompts.MaxLimit, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if len(ds) == 0 {
			break
		}
		for _, d := range ds {
			if err := s.FinishDelivery(ctx, d.ID, prompts.DeliveryAttempt{Error: "no answer within 10s"}, now.Add(time.Hour)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		ds, err := s.ClaimDeliveries(ctx, now.Add(time.Minute), 16, 30*time.Second)
		if err != nil || len(ds) != 0 {
			b.Fatal(err, len(ds))
		}
	}
}
