package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// Concurrent writers in the version-number test, versions each writes,
// and concurrent readers.
const (
	writers   = 64
	perWriter = 2
	readers   = 2
)

var versionTests = []test{
	{"versions are numbered from 1 without gaps", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		in := prompts.NewVersion{PromptID: p.ID, Content: "Hello {{name}}", ChangeSummary: ptr("first"), Metadata: `{"model":"m","temperature":0.2}`}
		v1, err := s.CreateVersion(ctx, in)
		is.NoErr(err)                                                              // create version
		is.True(prompts.ValidID(v1.ID))                                            // the id is a well-formed ULID
		is.Equal(v1.PromptID, p.ID)                                                // prompt_id
		is.Equal(v1.VersionNumber, 1)                                              // the first version is number 1
		is.Equal(v1.Content, "Hello {{name}}")                                     // content
		is.True(v1.ChangeSummary != nil)                                           // change_summary set
		is.Equal(*v1.ChangeSummary, "first")                                       // change_summary
		is.Equal(v1.Metadata, prompts.Metadata(`{"model":"m","temperature":0.2}`)) // metadata_
		v2 := s.version(p.ID, "two")
		v3 := s.version(p.ID, "three")
		is.Equal(v2.VersionNumber, 2) // then 2
		is.Equal(v3.VersionNumber, 3) // then 3
		for _, want := range []prompts.PromptVersion{v1, v2, v3} {
			got, err := s.GetVersion(ctx, p.ID, want.VersionNumber)
			is.NoErr(err)                                 // get version by number
			is.Equal(versionText(got), versionText(want)) // read back as created
		}
		q := s.prompt(p.ProjectID, "other")
		is.Equal(s.version(q.ID, "x").VersionNumber, 1) // numbers count per prompt
	}},
	{"version numbers have no gap or duplicate under concurrent writers and latest_version_id keeps up", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "busy")
		const total = writers * perWriter
		start := make(chan struct{})
		numbers := make(chan int, total)
		errs := make(chan error, total+readers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range perWriter {
					v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: fmt.Sprintf("writer %d, version %d", w, i)})
					if err != nil {
						errs <- err
						return
					}
					numbers <- v.VersionNumber
				}
			}()
		}
		// Readers check that a version and the latest_version_id that
		// names it appear in one step: reading the prompt, then the newest
		// version, then the prompt again must see them in that order.
		stop := make(chan struct{})
		var reading sync.WaitGroup
		for range readers {
			reading.Add(1)
			go func() {
				defer reading.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					before, err := s.GetPrompt(ctx, p.ID)
					if err != nil {
						errs <- err
						return
					}
					vs, _, err := s.ListVersions(ctx, p.ID, prompts.Page{Limit: 1})
					if err != nil {
						errs <- err
						return
					}
					after, err := s.GetPrompt(ctx, p.ID)
					if err != nil {
						errs <- err
						return
					}
					newest := ""
					if len(vs) == 1 {
						newest = vs[0].ID
					}
					if before.LatestVersionID > newest || newest > after.LatestVersionID {
						errs <- fmt.Errorf("latest_version_id %q then newest version %q then latest_version_id %q", before.LatestVersionID, newest, after.LatestVersionID)
						return
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		close(stop)
		reading.Wait()
		close(numbers)
		close(errs)
		for err := range errs {
			is.NoErr(err) // no writer or reader failed
		}
		seen := make(map[int]bool)
		for n := range numbers {
			is.True(!seen[n])             // no number is given twice
			is.True(n >= 1 && n <= total) // numbers run from 1 to the count
			seen[n] = true
		}
		is.Equal(len(seen), total) // every writer got a number
		vs, more, err := s.ListVersions(ctx, p.ID, prompts.Page{Limit: prompts.MaxLimit})
		is.NoErr(err)            // list versions
		is.True(!more)           // all in one page
		is.Equal(len(vs), total) // one version per write
		for i, v := range vs {
			is.Equal(v.VersionNumber, total-i) // stored numbers are total..1 without gap or duplicate
			if i > 0 {
				is.True(v.ID < vs[i-1].ID) // version ids increase with numbers
			}
		}
		got, err := s.GetPrompt(ctx, p.ID)
		is.NoErr(err)                           // get prompt
		is.Equal(got.LatestVersionID, vs[0].ID) // latest_version_id is the version with the highest number
	}},
	{"version ids increase with numbers", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 5)
		for i := 1; i < len(vs); i++ {
			is.True(vs[i].ID > vs[i-1].ID) // a later number has a greater id
		}
	}},
	{"latest_version_id is null until the first version", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		got, err := s.GetPrompt(ctx, p.ID)
		is.NoErr(err)                                                                    // get prompt
		is.Equal(got.LatestVersionID, "")                                                // null without versions
		is.True(strings.Contains(text(api.FromPrompt(got)), `"latest_version_id":null`)) // encoded as null
		a, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)                   // get active
		is.Equal(a.LatestVersionID, "") // null in the active read too
	}},
	{"latest_version_id is set in the same step as the create", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		for i := range 3 {
			v := s.version(p.ID, "v"+fmt.Sprint(i))
			got, err := s.GetPrompt(ctx, p.ID)
			is.NoErr(err)                       // get prompt
			is.Equal(got.LatestVersionID, v.ID) // the new version is the latest
			ps, _, err := s.ListPrompts(ctx, prompts.PromptFilter{ProjectIDs: []string{proj.ID}})
			is.NoErr(err)                         // list prompts
			is.Equal(ps[0].LatestVersionID, v.ID) // in the list too
			a, err := s.GetActiveByKey(ctx, proj.ID, "k", prompts.Staging)
			is.NoErr(err)                     // get active by key
			is.Equal(a.LatestVersionID, v.ID) // and in the active read
		}
	}},
	{"a new version is not active anywhere unless asked", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		v1 := s.version(p.ID, "one")
		is.Equal(s.active(p.ID, prompts.Production), "") // not active in production
		is.Equal(s.active(p.ID, prompts.Staging), "")    // not active in staging
		_, err := s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(v1.ID)})
		is.NoErr(err) // activate
		s.version(p.ID, "two")
		is.Equal(s.active(p.ID, prompts.Production), v1.ID) // a new version does not replace the active one
		is.Equal(s.active(p.ID, prompts.Staging), "")       // nor becomes active elsewhere
	}},
	{"get version with an unknown number is not found", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		s.versions(p.ID, 2)
		for _, n := range []int{0, -1, 3, 1 << 40} {
			_, err := s.GetVersion(t.Context(), p.ID, n)
			is.True(errors.Is(err, prompts.ErrNotFound)) // no such number
		}
		q := s.prompt(p.ProjectID, "empty")
		_, err := s.GetVersion(t.Context(), q.ID, 1)
		is.True(errors.Is(err, prompts.ErrNotFound)) // a prompt without versions has no number 1
	}},
	{"change_summary null and empty are kept apart", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		v1, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "a"})
		is.NoErr(err)                   // create version without change_summary
		is.Equal(v1.ChangeSummary, nil) // null
		v2, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "b", ChangeSummary: ptr("")})
		is.NoErr(err)                    // create version with an empty change_summary
		is.True(v2.ChangeSummary != nil) // empty is not null
		got, err := s.GetVersion(ctx, p.ID, 1)
		is.NoErr(err)                    // get version
		is.Equal(got.ChangeSummary, nil) // null reads back as null
		got, err = s.GetVersion(ctx, p.ID, 2)
		is.NoErr(err)                     // get version
		is.True(got.ChangeSummary != nil) // empty reads back as not null
		is.Equal(*got.ChangeSummary, "")  // and empty
	}},
	{"content is kept exactly", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		for _, content := range []string{
			" ",
			"line one\nline two\r\n\ttabbed  ",
			"emoji 😀, accents é, CJK 日本語, RTL עברית, U+2028 \u2028 and U+FFFF \uffff",
			`quotes " and backslashes \ and {"json": true}`,
			strings.Repeat("long content ", 6000),
		} {
			v, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: content})
			is.NoErr(err)                // any non-empty text is content
			is.Equal(v.Content, content) // returned as given
			got, err := s.GetVersion(t.Context(), p.ID, v.VersionNumber)
			is.NoErr(err)                  // get version
			is.Equal(got.Content, content) // stored as given
		}
	}},
}
