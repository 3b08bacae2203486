package memstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// addForeign appends n events of another project: versions of one prompt.
func addForeign(t testing.TB, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	p, err := s.CreateProject(ctx, prompts.NewProject{Name: "Others", Slug: strings.ToLower(prompts.NewID(time.Now()))})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ID, Key: "k", Name: "K"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n - 2 {
		if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: pr.ID, Content: fmt.Sprint("v", i)}); err != nil {
			t.Fatal(err)
		}
	}
}

// lookedAt lists every event of the projects, a page of limit at a time,
// and returns how many events of the log the reads looked at, and the
// events' ids.
func lookedAt(t *testing.T, s *Store, projects []string, limit int) (looked int, ids []int64) {
	t.Helper()
	f := prompts.EventFilter{ProjectIDs: projects, Limit: limit}
	for {
		s.mu.RLock()
		page, more, n := s.eventPage(f)
		s.mu.RUnlock()
		looked += n
		for _, e := range page {
			ids = append(ids, e.ID)
		}
		if !more {
			return looked, ids
		}
		f.After = page[len(page)-1].ID
	}
}

// A read of some projects' events looks at theirs only: as many with
// 20,000 events of another project, before, between and after theirs, as
// with none.
func TestEventsOfSomeProjectsCostWhatTheirsCost(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	build := func(foreign int) (*Store, []string) {
		s := New()
		addForeign(t, s, foreign/2)
		var mine []string
		for range 2 {
			p, err := s.CreateProject(ctx, prompts.NewProject{Name: "Mine", Slug: strings.ToLower(prompts.NewID(time.Now()))})
			is.NoErr(err)
			mine = append(mine, p.ID)
			pr, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ID, Key: "k", Name: "K"})
			is.NoErr(err)
			for i := range 3 {
				_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: pr.ID, Content: fmt.Sprint("v", i), Environments: []prompts.Environment{prompts.Production}})
				is.NoErr(err)
			}
			addForeign(t, s, foreign/4)
		}
		return s, mine
	}
	quiet, mine := build(0)
	busy, busyMine := build(20000)
	is.True(len(busy.events) > 20000)
	for _, projects := range [][]int{{0}, {1}, {0, 1}, {1, 0, 1}} {
		for _, limit := range []int{1, 2, 5, prompts.MaxLimit} {
			pick := func(ids []string) []string {
				var out []string
				for _, i := range projects {
					out = append(out, ids[i])
				}
				return out
			}
			want, quietIDs := lookedAt(t, quiet, pick(mine), limit)
			got, busyIDs := lookedAt(t, busy, pick(busyMine), limit)
			is.Equal(len(busyIDs), len(quietIDs)) // the same events
			is.Equal(got, want)                   // looked at as many
			is.True(got <= 2*len(busyIDs)+1)      // at most the events and a look past each page
		}
	}
}

// BenchmarkEventsOfOneProject reads the first page of one project's
// events among 0 and 100,000 events of another: the two take the same
// time.
func BenchmarkEventsOfOneProject(b *testing.B) {
	for _, foreign := range []int{0, 100000} {
		b.Run(fmt.Sprint("foreign=", foreign), func(b *testing.B) {
			ctx := context.Background()
			s := New()
			p, err := s.CreateProject(ctx, prompts.NewProject{Name: "Mine"})
			if err != nil {
				b.Fatal(err)
			}
			addForeign(b, s, foreign)
			f := prompts.EventFilter{ProjectIDs: []string{p.ID}}
			b.ReportAllocs()
			for b.Loop() {
				page, _, err := s.ListEvents(ctx, f)
				if err != nil || len(page) != 1 {
					b.Fatal(len(page), err)
				}
			}
		})
	}
}
