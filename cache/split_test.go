package cache_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/internal/cpuclock"
	"github.com/promptkit/prompts/memstore"
)

// splitFixture returns a memstore with a prompt whose production holds a
// split of its three versions (50/30/20), each with a change summary and
// variables, and the prompt.
func splitFixture(t testing.TB) (*memstore.Store, prompts.Prompt) {
	t.Helper()
	ctx := context.Background()
	ms := memstore.New()
	proj, err := ms.CreateProject(ctx, prompts.NewProject{Name: "P"})
	if err != nil {
		t.Fatal(err)
	}
	desc := "what it is for"
	p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "N", Description: &desc})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"one", "two", "three"} {
		summary := "the " + c
		if _, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: c + " {{name}} {{place}}", ChangeSummary: &summary}); err != nil {
			t.Fatal(err)
		}
	}
	split := prompts.Split{{VersionNumber: 1, Weight: 50}, {VersionNumber: 2, Weight: 30}, {VersionNumber: 3, Weight: 20}}
	if _, err := ms.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: split}); err != nil {
		t.Fatal(err)
	}
	return ms, p
}

// A cache holds a split with all its versions: every subject is picked
// from memory (one store read for all), as the store picks it, and each
// answer is the caller's own copy.
func TestSplitPickedFromMemory(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, p := splitFixture(t)
	h := &hooked{Store: ms}
	c := cache.New(h, cache.Standalone())
	served := map[int]int{}
	for i := range 200 {
		subject := "user-" + strconv.Itoa(i)
		for _, q := range []prompts.ActiveQuery{
			{PromptID: p.ID, Environment: prompts.Production, Subject: subject},
			{PromptID: p.ID, Environment: prompts.Production, Subject: subject, Shared: true},
		} {
			got, _, err := c.ReadActive(ctx, q)
			is.NoErr(err)
			want, _, err := prompts.ReadActive(ctx, ms, q)
			is.NoErr(err)
			is.Equal(got, want) // the store's answer: its pick, the split and its versions
			is.True(got.ActiveVersion == &got.SplitVersions[got.Split.Entry(p.ID, prompts.Production, subject)])
			if !q.Shared {
				served[got.ActiveVersion.VersionNumber]++
			}
		}
	}
	is.Equal(h.calls.Load(), int64(1)) // one store read for every subject
	is.Equal(len(served), 3)           // each version served to some
	first, err := c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(first.ActiveVersion.VersionNumber, 1) // no subject: the first entry's

	// A copy: changing what one answer holds changes no other.
	a, _, err := c.ReadActive(ctx, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Subject: "x"})
	is.NoErr(err)
	want, err := ms.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	a.Split[0].Weight = 1
	a.SplitVersions[1].Content = "changed"
	*a.SplitVersions[2].ChangeSummary = "changed"
	a.SplitVersions[0].Variables[0] = "changed"
	*a.Description = "changed"
	a.Split = append(a.Split, prompts.Share{})
	got, err := c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(got, want) // as it was
}

// A pick from memory allocates no more than a plain hit: one allocation
// for the copy, none for the pick (the hash included), none when shared.
func TestSplitPickAllocs(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, p := splitFixture(t)
	plain, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ProjectID, Key: "plain", Name: "N", Description: p.Description})
	is.NoErr(err)
	summary := "the one"
	_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: plain.ID, Content: "one {{name}} {{place}}", ChangeSummary: &summary, Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	c := cache.New(ms, cache.Standalone())
	read := func(q prompts.ActiveQuery) func() {
		return func() {
			if _, _, err := c.ReadActive(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}
	hit := testing.AllocsPerRun(200, read(prompts.ActiveQuery{PromptID: plain.ID, Environment: prompts.Production}))
	pick := testing.AllocsPerRun(200, read(prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Subject: "user-42"}))
	is.Equal(hit, 1.0)  // a plain hit: its copy
	is.Equal(pick, hit) // a pick of a split of three: no allocation more
	shared := testing.AllocsPerRun(200, read(prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Subject: "user-42", Shared: true}))
	is.Equal(shared, 0.0) // shared: none
}

// A snapshot holds splits with their versions: written and read back, it
// answers as the store does, and a cache falling back on it picks.
func TestSnapshotSplits(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, p := splitFixture(t)
	snap, err := cache.TakeSnapshot(ctx, ms, p.ProjectID)
	is.NoErr(err)
	want, err := ms.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(snap.Prompts[0].ActiveIn(prompts.Production), want) // taken as the store answers it
	b, err := snap.MarshalJSON()
	is.NoErr(err)
	var buf strings.Builder
	is.NoErr(cache.WriteSnapshot(ctx, &buf, ms, p.ProjectID))
	is.True(strings.Contains(buf.String(), `"splits":{"production":[{"weight":50,"version":{`)) // written as it is read, too
	back, err := cache.ParseSnapshot(b)
	is.NoErr(err)
	is.Equal(back.Prompts[0].ActiveIn(prompts.Production), want) // read back
	staging := back.Prompts[0].ActiveIn(prompts.Staging)
	is.Equal(staging.Split, nil) // no split there

	d := &down{Store: ms}
	d.isDown.Store(true)
	c := cache.New(d, cache.Standalone(), cache.WithFallback(back))
	for _, subject := range []string{"a", "b", "c", "d", "e"} {
		q := prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Subject: subject}
		got, stale, err := c.ReadActive(ctx, q)
		is.NoErr(err)
		is.True(stale) // the fallback's
		w, _, err := prompts.ReadActive(ctx, ms, q)
		is.NoErr(err)
		is.Equal(got.ActiveVersion.ID, w.ActiveVersion.ID) // picked as the store picks
	}
}

// ParseSnapshot refuses a split it could not serve, naming where.
func TestParseSnapshotBadSplits(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, p := splitFixture(t)
	snap, err := cache.TakeSnapshot(ctx, ms, p.ProjectID)
	is.NoErr(err)
	good, err := snap.MarshalJSON()
	is.NoErr(err)
	_, err = cache.ParseSnapshot(good)
	is.NoErr(err)
	for _, tc := range []struct {
		change func(shares []api.SnapshotShare) map[prompts.Environment][]api.SnapshotShare
		where  string
	}{
		{func(s []api.SnapshotShare) map[prompts.Environment][]api.SnapshotShare {
			return map[prompts.Environment][]api.SnapshotShare{prompts.Production: s[:1]}
		}, "prompts[0].splits.production: must have 2 to 10 entries"},
		{func(s []api.SnapshotShare) map[prompts.Environment][]api.SnapshotShare {
			s[0].Weight = 0
			return map[prompts.Environment][]api.SnapshotShare{prompts.Production: s}
		}, "prompts[0].splits.production[0].weight"},
		{func(s []api.SnapshotShare) map[prompts.Environment][]api.SnapshotShare {
			s[2] = s[0]
			return map[prompts.Environment][]api.SnapshotShare{prompts.Production: s}
		}, "prompts[0].splits.production[2].version.id"},
		{func(s []api.SnapshotShare) map[prompts.Environment][]api.SnapshotShare {
			s[0], s[1] = s[1], s[0]
			return map[prompts.Environment][]api.SnapshotShare{prompts.Production: s}
		}, "prompts[0].splits.production[0].version: is not the version of environments.production"},
		{func(s []api.SnapshotShare) map[prompts.Environment][]api.SnapshotShare {
			return map[prompts.Environment][]api.SnapshotShare{prompts.Production: s, "dev": s}
		}, "prompts[0].splits.dev"},
		{func(s []api.SnapshotShare) map[prompts.Environment][]api.SnapshotShare {
			return map[prompts.Environment][]api.SnapshotShare{prompts.Staging: s}
		}, "prompts[0].splits.staging[0].version: is not the version of environments.staging"},
		{func(s []api.SnapshotShare) map[prompts.Environment][]api.SnapshotShare {
			s[1].Version.PromptID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
			return map[prompts.Environment][]api.SnapshotShare{prompts.Production: s}
		}, "prompts[0].splits.production[1].version.prompt_id"},
		{func(s []api.SnapshotShare) map[prompts.Environment][]api.SnapshotShare {
			s[1].Version.Content = ""
			return map[prompts.Environment][]api.SnapshotShare{prompts.Production: s}
		}, "prompts[0].splits.production[1].version.content"},
	} {
		var doc api.Snapshot
		is.NoErr(api.Unmarshal(good, &doc))
		doc.Prompts[0].Splits = tc.change(doc.Prompts[0].Splits[prompts.Production])
		b, err := api.Marshal(doc)
		is.NoErr(err)
		_, err = cache.ParseSnapshot(b)
		if err == nil || !strings.Contains(err.Error(), tc.where) {
			t.Errorf("%s: %v", tc.where, err) // refused, naming where
		}
	}
	// A member missing from an entry.
	bad := strings.Replace(string(good), `[{"weight":50,"version":{`, `[{"version":{`, 1)
	_, err = cache.ParseSnapshot([]byte(bad))
	if err == nil || !strings.Contains(err.Error(), "prompts[0].splits.production[0].weight") {
		t.Errorf("an entry without its weight: %v", err)
	}
}

// BenchmarkSplitPick is a read through the Go API answered from memory,
// with its own copy and shared (ActiveQuery.Shared): of a prompt with
// one version active (plain), and of splits of two (90/10) and three
// versions of the same size, picked for a subject (the hash included; 64
// subjects in turn). Besides the wall time, the process's CPU time per
// read (cpu-ns/op), which a busy host disturbs less. BENCHMARKS.md
// ("Splits") has the ratios.
func BenchmarkSplitPick(b *testing.B) {
	ctx := context.Background()
	ms, three := splitFixture(b)
	newPrompt := func(key string) prompts.Prompt {
		p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: three.ProjectID, Key: key, Name: "N", Description: three.Description})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []string{"one", "two"} {
			summary := "the " + c
			if _, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: c + " {{name}} {{place}}", ChangeSummary: &summary}); err != nil {
				b.Fatal(err)
			}
		}
		return p
	}
	plain, two := newPrompt("plain"), newPrompt("two")
	if _, err := ms.Activate(ctx, prompts.Activation{PromptID: plain.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)}); err != nil {
		b.Fatal(err)
	}
	if _, err := ms.Activate(ctx, prompts.Activation{PromptID: two.ID, Environment: prompts.Production,
		Split: prompts.Split{{VersionNumber: 1, Weight: 90}, {VersionNumber: 2, Weight: 10}}}); err != nil {
		b.Fatal(err)
	}
	c := cache.New(ms, cache.Standalone())
	subjects := make([]string, 64)
	for i := range subjects {
		subjects[i] = "user-" + strconv.Itoa(1000+i)
	}
	for _, shared := range []bool{false, true} {
		for _, bc := range []struct {
			name    string
			id      string
			subject bool
		}{
			{"plain-hit", plain.ID, false},
			{"split2-pick", two.ID, true},
			{"split3-pick", three.ID, true},
		} {
			name := bc.name
			if shared {
				name += "-shared"
			}
			b.Run(name, func(b *testing.B) {
				q := prompts.ActiveQuery{PromptID: bc.id, Environment: prompts.Production, Shared: shared}
				b.ReportAllocs()
				i := 0
				cpu := cpuclock.Now()
				for b.Loop() {
					if bc.subject {
						q.Subject = subjects[i%len(subjects)]
					}
					if _, _, err := c.ReadActive(ctx, q); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(cpuclock.Now()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
