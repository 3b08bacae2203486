package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/memstore"
)

// BenchmarkCacheHitOverClient is the read an application makes, by key,
// through a cache over a client fed by the server's event stream: a hit
// costs what it costs over memstore, the network is not on its path.
func BenchmarkCacheHitOverClient(b *testing.B) {
	ctx := b.Context()
	s := newServer(b)
	cl := s.client(b)
	proj, err := cl.CreateProject(ctx, prompts.NewProject{Name: "P"})
	if err != nil {
		b.Fatal(err)
	}
	desc := "what it is for"
	p, err := cl.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "N", Description: &desc})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cl.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{name}}", Environments: []prompts.Environment{prompts.Production}}); err != nil {
		b.Fatal(err)
	}
	c := cache.New(cl)
	fctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = cl.Feed().Run(fctx, c); close(done) }()
	defer func() { stop(); <-done }()
	poll.For(b, 10*time.Second, "the feed connects", func() bool { return !c.Stats().Lost })
	if _, err := c.GetActiveByKey(ctx, proj.ID, "support/greeting", prompts.Production); err != nil {
		b.Fatal(err)
	}
	hits := c.Stats().Hits
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetActiveByKey(ctx, proj.ID, "support/greeting", prompts.Production); err != nil {
			b.Fatal(err)
		}
	}
	if got := c.Stats().Hits - hits; got != int64(b.N) {
		b.Fatalf("%d hits of %d reads: the reads went to the server", got, b.N)
	}
}

// BenchmarkCacheHitOverMemstore is BenchmarkCacheHitOverClient's read
// through a cache over memstore, the same prompt: the baseline a hit over
// a client is held to.
func BenchmarkCacheHitOverMemstore(b *testing.B) {
	ctx := b.Context()
	ms := memstore.New()
	proj, err := ms.CreateProject(ctx, prompts.NewProject{Name: "P"})
	if err != nil {
		b.Fatal(err)
	}
	desc := "what it is for"
	p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "N", Description: &desc})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{name}}", Environments: []prompts.Environment{prompts.Production}}); err != nil {
		b.Fatal(err)
	}
	c := cache.New(ms, cache.Standalone())
	if _, err := c.GetActiveByKey(ctx, proj.ID, "support/greeting", prompts.Production); err != nil {
		b.Fatal(err)
	}
	hits := c.Stats().Hits
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetActiveByKey(ctx, proj.ID, "support/greeting", prompts.Production); err != nil {
			b.Fatal(err)
		}
	}
	if got := c.Stats().Hits - hits; got != int64(b.N) {
		b.Fatalf("%d hits of %d reads", got, b.N)
	}
}
