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
