package memstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// The data file's format does not change with the domain's types: a
// journal an earlier release wrote (testdata/journal-v1.data, see
// TestFileStoreReadsOldIdempotencyRecords) opens with every field, and
// the store writes the same member names again.
func TestFileFormatUnchanged(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	old, err := os.ReadFile("testdata/journal-v1.data")
	is.NoErr(err)
	path := filepath.Join(t.TempDir(), "prompts.data")
	is.NoErr(os.WriteFile(path, old, 0o600))
	s, err := memstore.Open(path, memstore.WithClock(func() time.Time { return time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC) }))
	is.NoErr(err)
	defer func() { s.Close() }()

	projects, _, err := s.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	is.Equal(len(projects), 1)
	is.Equal(projects[0].Name, "Old journal") // every field of the project
	is.Equal(projects[0].Slug, "old-journal")
	is.Equal(projects[0].CreatedAt, time.Date(2026, 11, 21, 10, 0, 0, 2000000, time.UTC))
	list, _, err := s.ListPrompts(ctx, prompts.PromptFilter{})
	is.NoErr(err)
	is.Equal(len(list), 1)
	p := list[0]
	is.Equal(p.ProjectID, projects[0].ID) // and of the prompt
	is.Equal(p.Key, "greeting")
	is.Equal(p.Name, "Greeting")
	is.True(p.LatestVersionID != "")
	is.True(p.Revision > 1795255200008000)
	vs, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(vs), 2)
	is.Equal(vs[0].VersionNumber, 2) // of the versions
	is.True(strings.HasPrefix(vs[0].Content, "TWO "))
	is.Equal(vs[0].PromptID, p.ID)
	ds, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.True(len(ds) > 0)
	is.Equal(ds[0].Environment, prompts.Production) // of the deployment records
	is.True(ds[0].VersionNumber != nil)

	meta := prompts.Metadata(`{"model":"gpt-5","n":1.50}`)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "three", Metadata: meta})
	is.NoErr(err)
	is.NoErr(s.Close())
	b, err := os.ReadFile(path)
	is.NoErr(err)
	for _, name := range []string{`"project_id":"`, `"latest_version_id":"`, `"version_number":3`, `"metadata_":{"model":"gpt-5","n":1.50}`, `"is_private":false`} {
		is.True(strings.Contains(string(b), name)) // the names the earlier releases wrote
	}
	s, err = memstore.Open(path)
	is.NoErr(err)
	v, err := s.GetVersion(ctx, p.ID, 3)
	is.NoErr(err)
	is.Equal(v.Metadata, meta) // read back as written
}

// Versions an earlier release wrote, before template formats, open as
// plain, and a new version of their prompt takes that format; a
// dotprompt version's format survives reopening.
func TestFileOldVersionsArePlain(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path, s, p := openV1Journal(t, "template_format")
	defer func() { s.Close() }()
	vs, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
	is.NoErr(err)
	for _, v := range vs {
		is.Equal(v.TemplateFormat, prompts.FormatPlain)
	}
	v3, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{#if x}}{{y}}{{/if}}"})
	is.NoErr(err)
	is.Equal(v3.TemplateFormat, prompts.FormatPlain) // the latest's format
	is.Equal(v3.Variables, []string{"y"})            // plain: {{y}} only
	v4, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{#if x}}{{y}}{{/if}}", TemplateFormat: prompts.FormatDotprompt})
	is.NoErr(err)
	is.Equal(v4.Variables, []string{"x", "y"})
	is.NoErr(s.Close())
	s, err = memstore.Open(path)
	is.NoErr(err)
	v, err := s.GetVersion(ctx, p.ID, 4)
	is.NoErr(err)
	is.Equal(v.TemplateFormat, prompts.FormatDotprompt)
	v, err = s.GetVersion(ctx, p.ID, 1)
	is.NoErr(err)
	is.Equal(v.TemplateFormat, prompts.FormatPlain)
}

// Versions an earlier release wrote, before partials, open with none
// (Partials empty, not nil), and a version's partials survive reopening:
// the file names them "partials", and only for a version that has some.
func TestFileOldVersionsHaveNoPartials(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path, s, p := openV1Journal(t, "partials")
	defer func() { s.Close() }()
	vs, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
	is.NoErr(err)
	for _, v := range vs {
		is.Equal(v.Partials, []string{})
	}
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{> b}}{{> a/x}}", TemplateFormat: prompts.FormatDotprompt})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "none"})
	is.NoErr(err)
	is.NoErr(s.Close())
	b, err := os.ReadFile(path)
	is.NoErr(err)
	is.Equal(strings.Count(string(b), `"partials":`), 1)
	is.True(strings.Contains(string(b), `"partials":["a/x","b"]`))
	s, err = memstore.Open(path)
	is.NoErr(err)
	v, err := s.GetVersion(ctx, p.ID, 3)
	is.NoErr(err)
	is.Equal(v.Partials, []string{"a/x", "b"})
	v, err = s.GetVersion(ctx, p.ID, 4)
	is.NoErr(err)
	is.Equal(v.Partials, []string{})
}

// openV1Journal opens a copy of a data file an earlier release wrote
// (testdata/journal-v1.data), which has no member word, and returns its
// path, the store and its first prompt.
func openV1Journal(t *testing.T, word string) (string, *memstore.Store, prompts.Prompt) {
	t.Helper()
	is := is.New(t)
	old, err := os.ReadFile("testdata/journal-v1.data")
	is.NoErr(err)
	is.True(!strings.Contains(string(old), word)) // written before it existed
	path := filepath.Join(t.TempDir(), "prompts.data")
	is.NoErr(os.WriteFile(path, old, 0o600))
	s, err := memstore.Open(path)
	is.NoErr(err)
	list, _, err := s.ListPrompts(context.Background(), prompts.PromptFilter{})
	is.NoErr(err)
	return path, s, list[0]
}

// Environments and records an earlier release wrote, before splits, open
// without a split. A split held, and the records' split and
// previous_split, are written with the interface's names, and survive a
// reopen and a compaction.
func TestFileSplits(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path, s, p := openV1Journal(t, "split")
	defer func() { s.Close() }()
	a, err := s.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.True(a.ActiveVersion != nil) // what the old file has active
	is.Equal(a.Split, nil)          // and no split
	old, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.True(len(old) > 0)
	for _, d := range old {
		is.Equal(d.Split, nil) // records without splits
		is.Equal(d.PreviousSplit, nil)
	}

	allow := prompts.Change{AllowVariableChange: true}
	_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production,
		Split: prompts.Split{{VersionNumber: 1, Weight: 90}, {VersionNumber: 2, Weight: 10}}, Change: allow})
	is.NoErr(err)
	_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging,
		Split: prompts.Split{{VersionNumber: 2, Weight: 1}, {VersionNumber: 1, Weight: 3}}, Change: allow})
	is.NoErr(err)
	_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2), Change: allow})
	is.NoErr(err)
	_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Change: allow})
	is.NoErr(err) // back to the split
	// state is what the environments point at and the records, in full.
	state := func(s *memstore.Store) string {
		t.Helper()
		var b strings.Builder
		for _, env := range prompts.Environments {
			a, err := s.GetActive(ctx, p.ID, env)
			is.NoErr(err)
			fmt.Fprintf(&b, "%s: v%d %v\n", env, a.ActiveVersion.VersionNumber, a.Split)
		}
		ds, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
		is.NoErr(err)
		for _, d := range ds {
			fmt.Fprintf(&b, "%s %s v%d %v <- %v\n", d.Action, d.Environment, *d.VersionNumber, d.Split, d.PreviousSplit)
		}
		return b.String()
	}
	want := state(s)
	v1, err := s.GetVersion(ctx, p.ID, 1)
	is.NoErr(err)
	v2, err := s.GetVersion(ctx, p.ID, 2)
	is.NoErr(err)
	split := `[{"version_id":"` + v1.ID + `","version_number":1,"weight":90},{"version_id":"` + v2.ID + `","version_number":2,"weight":10}]`
	is.True(strings.Contains(want, "production: v1 [{"+v1.ID+" 1 90} {"+v2.ID+" 2 10}]"))
	is.True(strings.Contains(want, "rollback production v1 [{"+v1.ID+" 1 90} {"+v2.ID+" 2 10}] <- []"))
	is.NoErr(s.Close())

	b, err := os.ReadFile(path)
	is.NoErr(err)
	for _, name := range []string{`"splits":{"production":` + split, `"split":` + split, `"previous_split":` + split} {
		is.True(strings.Contains(string(b), name)) // the interface's names
	}
	is.True(!strings.Contains(string(b), `"VersionID"`)) // not Go's

	s, err = memstore.Open(path)
	is.NoErr(err)
	is.Equal(state(s), want) // read back
	is.NoErr(s.Close())

	// A compaction rewrites the prompt: renames with a large description
	// grow the journal past its slack, and events go after a minute.
	var ticks time.Duration
	clock := func() time.Time {
		ticks += time.Second
		return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).Add(ticks)
	}
	opts := []memstore.Option{memstore.WithClock(clock), memstore.WithEventRetention(time.Minute)}
	s, err = memstore.Open(path, opts...)
	is.NoErr(err)
	desc := strings.Repeat("d", prompts.MaxDescription)
	const renames = 300
	for i := range renames {
		_, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some(fmt.Sprint("name ", i)), Description: prompts.Some(desc)})
		is.NoErr(err)
	}
	st, err := os.Stat(path)
	is.NoErr(err)
	is.True(st.Size() < renames*prompts.MaxDescription) // compacted: smaller than the renames' records alone
	is.Equal(state(s), want)
	is.NoErr(s.Close())
	s, err = memstore.Open(path, opts...)
	is.NoErr(err)
	is.Equal(state(s), want) // and read back
}
