package memstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptkit/prompts"
)

// A writer that took its position in the journal before a compaction,
// and waits for it after, returns at once: the compaction wrote its
// record.
func TestJournalPositionOutlivesCompaction(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "prompts.data"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, pos, err := writeLocked(s, "", prompts.Idempotency{}, func() (prompts.Project, error) {
		p := &prompts.Project{ID: prompts.NewID(time.Now()), Name: "P", Slug: "p", CreatedAt: time.Now()}
		s.projects[p.ID], s.slugs[p.Slug] = p, p.ID
		s.projectOrder = insertSorted(s.projectOrder, p.ID)
		return *p, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	err = s.compact() // another writer's, before this one waits
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.journal.wait(pos) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a position from before the compaction is never reached")
	}
	if _, _, err := s.ListProjects(context.Background(), prompts.ProjectFilter{}); err != nil {
		t.Fatal(err)
	}
}

// Records past the retention are removed by later writes, with or without
// a key of their own: memory does not grow with keys no one repeats.
func TestExpiredIdempotencyRecordsAreRemoved(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := New(WithClock(func() time.Time { return now }))
	ctx := context.Background()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		_, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k" + string(rune('a'+i)), Name: "K",
			Idempotency: prompts.Idempotency{Key: "key" + string(rune('a'+i)), Request: "r"}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(s.idem) != 3 {
		t.Fatalf("%d records, want 3", len(s.idem))
	}
	now = now.Add(prompts.IdempotencyRetention + time.Second)
	if _, err := s.CreateProject(ctx, prompts.NewProject{Name: "Q"}); err != nil { // a write without a key
		t.Fatal(err)
	}
	if len(s.idem) != 0 || len(s.idemOrder) != 0 {
		t.Fatalf("%d records (%d in order) left after the retention, want none", len(s.idem), len(s.idemOrder))
	}
}
