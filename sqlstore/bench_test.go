package sqlstore_test

import (
	"context"
	"testing"

	"github.com/promptkit/prompts"
)

// seedActive returns a store holding one prompt with version 1 active in
// production.
func seedActive(b *testing.B) (prompts.Store, prompts.Project, prompts.Prompt) {
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

// BenchmarkCreateVersionParallel writes versions of one prompt from many
// goroutines, which queue on the prompt's row lock.
func BenchmarkCreateVersionParallel(b *testing.B) {
	s, _, p := seedActive(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
