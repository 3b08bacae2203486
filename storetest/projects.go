package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

var projectTests = []test{
	{"project is created and read back", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p, err := s.CreateProject(ctx, prompts.NewProject{Name: "Support Bot", Description: "answers customers", IsPrivate: true})
		is.NoErr(err)                                // create project
		is.True(prompts.ValidID(p.ID))               // the id is a well-formed ULID
		is.Equal(p.Name, "Support Bot")              // name
		is.Equal(p.Slug, "support-bot")              // slug derived from the name
		is.Equal(p.Description, "answers customers") // description
		is.True(p.IsPrivate)                         // is_private
		got, err := s.GetProject(ctx, p.ID)
		is.NoErr(err)                              // get project
		is.Equal(projectText(got), projectText(p)) // read back as created
		q, err := s.CreateProject(ctx, prompts.NewProject{Name: "Other"})
		is.NoErr(err)               // create a project with only a name
		is.Equal(q.Description, "") // description defaults to empty
		is.True(!q.IsPrivate)       // is_private defaults to false
		is.True(q.ID != p.ID)       // each project has its own id
	}},
	{"project slug is derived from the name", func(t *testing.T, s *fixture) {
		is := is.New(t)
		for name, slug := range map[string]string{
			"Customer Support — EU!": "customer-support-eu",
			"  Hello   World  ":      "hello-world",
			"ABC123":                 "abc123",
			"Ünïcode naïve":          "n-code-na-ve",
		} {
			p, err := s.CreateProject(t.Context(), prompts.NewProject{Name: name})
			is.NoErr(err)          // create project
			is.Equal(p.Slug, slug) // slug derived from the name
		}
		long, err := s.CreateProject(t.Context(), prompts.NewProject{Name: strings.Repeat("ab ", 85)})
		is.NoErr(err)                  // a long name still gives a slug
		is.True(len(long.Slug) <= 128) // a derived slug is at most 128 characters
	}},
	{"project slug can be given", func(t *testing.T, s *fixture) {
		is := is.New(t)
		for _, slug := range []string{"my-slug", "a", "0", "x1-2y", strings.Repeat("a", 128)} {
			p, err := s.CreateProject(t.Context(), prompts.NewProject{Name: "Whatever " + slug, Slug: slug})
			is.NoErr(err)          // create project with a slug
			is.Equal(p.Slug, slug) // the slug given is kept
			got, err := s.GetProject(t.Context(), p.ID)
			is.NoErr(err)            // get project
			is.Equal(got.Slug, slug) // the slug given is stored
		}
	}},
	{"project slug must be lower-case letters, digits and single hyphens", func(t *testing.T, s *fixture) {
		is := is.New(t)
		before := s.snapshot()
		for _, slug := range []string{"Bad", "a--b", "-a", "a-", "-", "a b", "a_b", "a.b", "a/b", "ü", "a\x00", strings.Repeat("a", 129)} {
			_, err := s.CreateProject(t.Context(), prompts.NewProject{Name: "Name", Slug: slug})
			s.invalid(err, "slug")
		}
		is.Equal(s.snapshot(), before) // refused projects are not stored
	}},
	{"project slug must be derivable from the name when not given", func(t *testing.T, s *fixture) {
		is := is.New(t)
		_, err := s.CreateProject(t.Context(), prompts.NewProject{Name: "日本語"})
		s.invalid(err, "slug")
		p, err := s.CreateProject(t.Context(), prompts.NewProject{Name: "日本語", Slug: "nihongo"})
		is.NoErr(err)               // a name without ASCII is fine with a slug
		is.Equal(p.Name, "日本語")     // the name is kept
		is.Equal(p.Slug, "nihongo") // the slug is kept
	}},
	{"project slug is unique", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		_, err := s.CreateProject(ctx, prompts.NewProject{Name: "Support", Slug: "support"})
		is.NoErr(err) // first project
		before := s.snapshot()
		_, err = s.CreateProject(ctx, prompts.NewProject{Name: "Another", Slug: "support"})
		is.True(errors.Is(err, prompts.ErrConflict)) // a slug given twice is a conflict
		_, err = s.CreateProject(ctx, prompts.NewProject{Name: "SUPPORT"})
		is.True(errors.Is(err, prompts.ErrConflict)) // a derived slug that is taken is a conflict
		is.Equal(s.snapshot(), before)               // the refused projects are not stored
		_, err = s.CreateProject(ctx, prompts.NewProject{Name: "Support", Slug: "support-2"})
		is.NoErr(err) // the same name with another slug is fine
	}},
}
