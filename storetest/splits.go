package storetest

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// byNumber and byID are entries of a split given as input.
func byNumber(n, weight int) prompts.Share { return prompts.Share{VersionNumber: n, Weight: weight} }
func byID(id string, weight int) prompts.Share {
	return prompts.Share{VersionID: id, Weight: weight}
}

// share is an entry of a split as a Store answers it: with the version's
// id and number.
func share(v prompts.PromptVersion, weight int) prompts.Share {
	return prompts.Share{VersionID: v.ID, VersionNumber: v.VersionNumber, Weight: weight}
}

// splitText is a split in one word: "v1:90,v2:10".
func splitText(sp prompts.Split) string {
	parts := make([]string, len(sp))
	for i, e := range sp {
		parts[i] = "v" + strconv.Itoa(e.VersionNumber) + ":" + strconv.Itoa(e.Weight)
	}
	return strings.Join(parts, ",")
}

// split makes env of the prompt hold the split, with the change's
// options.
func (s *fixture) split(promptID string, env prompts.Environment, sp prompts.Split, c prompts.Change) (prompts.ActivePrompt, error) {
	return s.Activate(s.t.Context(), prompts.Activation{PromptID: promptID, Environment: env, Split: sp, Change: c})
}

// served returns what env of the prompt points at, as stateText writes
// it, from GetActive: "none", "v3" or "v1:90,v2:10".
func (s *fixture) served(promptID string, env prompts.Environment) string {
	is := is.New(s.t)
	is.Helper()
	a, err := s.GetActive(s.t.Context(), promptID, env)
	is.NoErr(err) // get active
	return activeState(a)
}

// activeState is what an answer says its environment points at, as
// stateText writes it; "broken" when its ActiveVersion, Split and
// SplitVersions disagree.
func activeState(a prompts.ActivePrompt) string {
	switch {
	case a.Split == nil && a.SplitVersions == nil && a.ActiveVersion == nil:
		return "none"
	case a.ActiveVersion == nil:
		return "broken"
	case a.Split == nil && a.SplitVersions == nil:
		return "v" + strconv.Itoa(a.ActiveVersion.VersionNumber)
	case len(a.Split) != len(a.SplitVersions) || a.ActiveVersion != &a.SplitVersions[0]:
		return "broken"
	}
	for i, e := range a.Split {
		if v := a.SplitVersions[i]; v.ID != e.VersionID || v.VersionNumber != e.VersionNumber {
			return "broken"
		}
	}
	return splitText(a.Split)
}

// checkSplitIDs checks that every entry of each split names its version
// by the id of its number's version of the prompt.
func (s *fixture) checkSplitIDs(promptID string, splits ...prompts.Split) {
	is := is.New(s.t)
	is.Helper()
	for _, sp := range splits {
		for _, e := range sp {
			is.Equal(e.VersionID, s.versionID(promptID, e.VersionNumber)) // an entry's id is its number's version's
		}
	}
}

var splitTests = []test{
	{"a split is set by numbers and ids, and every read answers it with its first entry's version", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		vs := s.versions(p.ID, 3)
		in := prompts.Split{byNumber(1, 90), byID(vs[2].ID, 10)}
		a, err := s.split(p.ID, prompts.Production, in, prompts.Change{})
		is.NoErr(err) // set a split
		in[0].Weight = 7
		want := prompts.Split{share(vs[0], 90), share(vs[2], 10)}
		is.Equal(a.Split, want)                     // resolved: each entry with id and number, in the order given
		is.Equal(activeState(a), "v1:90,v3:10")     // the first entry's version served, and the versions of all
		is.Equal(a.Environment, prompts.Production) // for the environment asked
		is.Equal(versionText(a.SplitVersions[0]), versionText(vs[0]))
		is.Equal(versionText(a.SplitVersions[1]), versionText(vs[2])) // the whole versions
		is.Equal(a.Revision, s.revision(p.ID))                        // with the new revision

		for _, read := range []func() (prompts.ActivePrompt, error){
			func() (prompts.ActivePrompt, error) { return s.GetActive(ctx, p.ID, prompts.Production) },
			func() (prompts.ActivePrompt, error) { return s.GetActiveByKey(ctx, proj.ID, "k", prompts.Production) },
			func() (prompts.ActivePrompt, error) {
				a, _, err := prompts.ReadActive(ctx, s.Store, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production})
				return a, err
			},
			func() (prompts.ActivePrompt, error) {
				a, _, err := prompts.ReadActive(ctx, s.Store, prompts.ActiveQuery{ProjectID: proj.ID, Key: "k", Environment: prompts.Production, Shared: true})
				return a, err
			},
		} {
			got, err := read()
			is.NoErr(err)                              // GetActive, GetActiveByKey, ReadActive (shared too)
			is.Equal(activeText(got), activeText(a))   // answer as Activate did
			is.Equal(activeState(got), activeState(a)) // with its first entry as ActiveVersion
		}
		is.Equal(s.served(p.ID, prompts.Staging), "none") // another environment is untouched

		got, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		got.Split[0].Weight = 1
		got.SplitVersions[1].Content = "changed"
		got.ActiveVersion.Content = "changed"
		is.Equal(s.served(p.ID, prompts.Production), "v1:90,v3:10") // an answer is a copy
		again, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		is.Equal(activeText(again), activeText(a)) // nor did the input given change it
	}},
	{"a read with a subject is served the version the published formula picks", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		vs := s.versions(p.ID, 4)
		weights := []int{50, 30, 20}
		_, err := s.split(p.ID, prompts.Staging, prompts.Split{byNumber(3, 50), byNumber(1, 30), byNumber(2, 20)}, prompts.Change{})
		is.NoErr(err)
		order := []prompts.PromptVersion{vs[2], vs[0], vs[1]}
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(4)})
		is.NoErr(err) // production holds one version
		reader, hasReader := s.Store.(prompts.ActiveReader)
		seen := make([]int, len(weights))
		for i := range 300 {
			subject := "user-" + strconv.Itoa(i)
			want := prompts.SplitEntry(prompts.SplitPoint(p.ID, prompts.Staging, subject), weights)
			seen[want]++
			for _, q := range []prompts.ActiveQuery{
				{PromptID: p.ID, Environment: prompts.Staging, Subject: subject},
				{ProjectID: proj.ID, Key: "k", Environment: prompts.Staging, Subject: subject, Shared: true},
			} {
				a, _, err := prompts.ReadActive(ctx, s.Store, q)
				is.NoErr(err)                                     // read with a subject
				is.Equal(a.ActiveVersion.ID, order[want].ID)      // the version the formula picks
				is.Equal(len(a.SplitVersions), len(weights))      // with the split still there
				is.Equal(splitText(a.Split), "v3:50,v1:30,v2:20") // in its order
				if hasReader {
					a, _, err := reader.ReadActive(ctx, q)
					is.NoErr(err)                                // the store's own ReadActive
					is.Equal(a.ActiveVersion.ID, order[want].ID) // picks alike
				}
			}
			a, _, err := prompts.ReadActive(ctx, s.Store, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Subject: subject})
			is.NoErr(err)
			is.Equal(a.ActiveVersion.ID, vs[3].ID) // one version serves every subject
		}
		for i, n := range seen {
			is.True(n > 0) // every entry serves some subjects
			t.Logf("entry %d (weight %d): %d of 300", i, weights[i], n)
		}
		is.Equal(s.served(p.ID, prompts.Staging), "v3:50,v1:30,v2:20") // without a subject, the first entry
	}},
	{"a split writes a record with the split and what was there before", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 3)
		is.NoErr(s.activate(p.ID, 1, prompts.Production, prompts.Change{}))
		rev := s.revision(p.ID)
		mark := s.clock.mark()
		a, err := s.split(p.ID, prompts.Production, prompts.Split{byNumber(2, 70), byID(vs[2].ID, 30)}, prompts.Change{Actor: "ci", Reason: "canary"})
		is.NoErr(err)
		is.True(a.Revision > rev) // the revision moves on
		rev = a.Revision
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(3, 50), byNumber(1, 50)}, prompts.Change{})
		is.NoErr(err) // a split over a split
		is.True(s.revision(p.ID) > rev)
		all := s.deployments(p.ID, prompts.Production)
		is.Equal(recordTexts(all), s.records([]string{
			"split production v3:50,v1:50<-v2:70,v3:30 - -",
			"split production v2:70,v3:30<-v1 ci canary",
			"activate production v1<-none - -",
		}))
		is.Equal(all[1].Action, prompts.ActionSplit)
		is.Equal(all[1].Split, prompts.Split{share(vs[1], 70), share(vs[2], 30)}) // the split resolved
		is.Equal(all[1].PreviousSplit, nil)                                       // nil when there was none
		is.Equal(all[0].PreviousSplit, all[1].Split)                              // the split held before
		s.checkSplitIDs(p.ID, all[0].Split, all[0].PreviousSplit)
		s.idStamped(mark, all[1].ID)
		s.stamped(mark, all[1].CreatedAt)
		want := recordTexts(all)
		all[0].Split[0].Weight, all[0].PreviousSplit[1].VersionNumber = 1, 1
		is.Equal(recordTexts(s.deployments(p.ID, prompts.Production)), want) // a record listed is a copy
	}},
	{"setting the split an environment holds changes nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		vs := []prompts.PromptVersion{s.version(p.ID, "Hi {{a}}"), s.version(p.ID, "Hi {{b}}")}
		_, err := s.split(p.ID, prompts.Production, prompts.Split{byNumber(1, 60), byNumber(2, 40)}, prompts.Change{})
		is.NoErr(err)
		before, rev, records := s.snapshot(), s.revision(p.ID), recordTexts(s.deployments(p.ID, ""))
		// By ids this time, expecting the current revision, and without
		// AllowVariableChange, though its versions differ: nothing changes,
		// so nothing is guarded.
		a, err := s.split(p.ID, prompts.Production, prompts.Split{byID(vs[0].ID, 60), byID(vs[1].ID, 40)}, prompts.Change{IfRevision: rev})
		is.NoErr(err)                                           // the same split
		is.Equal(a.Revision, rev)                               // the revision stays
		is.Equal(s.snapshot(), before)                          // nothing changed
		is.Equal(recordTexts(s.deployments(p.ID, "")), records) // no record

		allow := prompts.Change{AllowVariableChange: true}
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(2, 40), byNumber(1, 60)}, allow)
		is.NoErr(err) // another order is another split
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(2, 41), byNumber(1, 60)}, allow)
		is.NoErr(err) // and other weights
		is.Equal(recordTexts(s.deployments(p.ID, ""))[:2], s.records([]string{
			"split production v2:41,v1:60<-v2:40,v1:60 - -",
			"split production v2:40,v1:60<-v1:60,v2:40 - -",
		}))
	}},
	{"one version activated over a split replaces it, and a deactivation removes it", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 3)
		sp := prompts.Split{byNumber(1, 50), byNumber(2, 50)}
		_, err := s.split(p.ID, prompts.Production, sp, prompts.Change{})
		is.NoErr(err)
		a, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(3)})
		is.NoErr(err)                          // one version over the split
		is.Equal(activeState(a), "v3")         // no split left in the answer
		is.Equal(a.ActiveVersion.ID, vs[2].ID) // the version
		is.Equal(s.served(p.ID, prompts.Production), "v3")
		_, err = s.split(p.ID, prompts.Production, sp, prompts.Change{})
		is.NoErr(err)
		a, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: prompts.Production})
		is.NoErr(err) // deactivate the split
		is.Equal(activeState(a), "none")
		is.Equal(s.served(p.ID, prompts.Production), "none")
		all := s.deployments(p.ID, prompts.Production)
		is.Equal(recordTexts(all), s.records([]string{
			"deactivate production none<-v1:50,v2:50 - -",
			"split production v1:50,v2:50<-v3 - -",
			"activate production v3<-v1:50,v2:50 - -",
			"split production v1:50,v2:50<-none - -",
		}))
		is.Equal(all[0].Split, nil) // a record of one version, or none, has no split
		is.Equal(all[2].Split, nil)
		s.checkSplitIDs(p.ID, all[0].PreviousSplit, all[2].PreviousSplit)
	}},
	{"rollback restores a split, and rolling back twice returns to where it started", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		s.versions(p.ID, 3)
		rollback := func(want string) {
			t.Helper()
			a, err := s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Change: prompts.Change{Actor: "me"}})
			is.NoErr(err)                          // roll back
			is.Equal(activeState(a), want)         // answered as GetActive does
			is.Equal(a.Revision, s.revision(p.ID)) // with the new revision
			is.Equal(s.served(p.ID, prompts.Production), want)
		}
		is.NoErr(s.activate(p.ID, 1, prompts.Production, prompts.Change{}))
		_, err := s.split(p.ID, prompts.Production, prompts.Split{byNumber(2, 80), byNumber(3, 20)}, prompts.Change{})
		is.NoErr(err)
		rollback("v1")          // from the split to the version before
		rollback("v2:80,v3:20") // and back to the split
		is.NoErr(s.activate(p.ID, 3, prompts.Production, prompts.Change{}))
		rollback("v2:80,v3:20") // from a version to the split before
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(1, 1), byNumber(2, 1)}, prompts.Change{})
		is.NoErr(err)
		rollback("v2:80,v3:20") // from a split to the split before
		rollback("v1:1,v2:1")   // and back
		is.NoErr(s.deactivate(ctx, p.ID, prompts.Production))
		rollback("v1:1,v2:1") // a deactivated split comes back
		all := s.deployments(p.ID, prompts.Production)
		is.Equal(recordTexts(all), s.records([]string{
			"rollback production v1:1,v2:1<-none me -",
			"deactivate production none<-v1:1,v2:1 - -",
			"rollback production v1:1,v2:1<-v2:80,v3:20 me -",
			"rollback production v2:80,v3:20<-v1:1,v2:1 me -",
			"split production v1:1,v2:1<-v2:80,v3:20 - -",
			"rollback production v2:80,v3:20<-v3 me -",
			"activate production v3<-v2:80,v3:20 - -",
			"rollback production v2:80,v3:20<-v1 me -",
			"rollback production v1<-v2:80,v3:20 me -",
			"split production v2:80,v3:20<-v1 - -",
			"activate production v1<-none - -",
		}))
		for _, d := range all {
			s.checkSplitIDs(p.ID, d.Split, d.PreviousSplit)
		}
	}},
	{"a split naming a version the prompt does not have is not found, and changes nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		s.versions(p.ID, 2)
		other := s.prompt(proj.ID, "other")
		ov := s.version(other.ID, "theirs")
		before, rev := s.snapshot(), s.revision(p.ID)
		for _, sp := range []prompts.Split{
			{byNumber(1, 1), byNumber(9, 1)},
			{byID(unknownID, 1), byNumber(2, 1)},
			{byNumber(1, 1), byID(ov.ID, 1)}, // another prompt's version
		} {
			_, err := s.split(p.ID, prompts.Production, sp, prompts.Change{IfRevision: rev - 1})
			s.notFound(err, splitText(sp)) // existence before the precondition
		}
		_, err := s.split(unknownID, prompts.Production, prompts.Split{byNumber(1, 1), byNumber(2, 1)}, prompts.Change{})
		s.notFound(err, "prompt")
		is.Equal(s.snapshot(), before) // nothing changed
		is.Equal(s.revision(p.ID), rev)
		is.Equal(len(s.deployments(p.ID, "")), 0) // no record
	}},
	{"a split naming one version twice, by id and by number, is invalid at that entry, and changes nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 3)
		is.NoErr(s.activate(p.ID, 1, prompts.Production, prompts.Change{}))
		before, rev := s.snapshot(), s.revision(p.ID)
		_, err := s.split(p.ID, prompts.Production, prompts.Split{byID(vs[0].ID, 50), byNumber(1, 50)}, prompts.Change{})
		s.invalid(err, "split[1].version_number")
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(2, 50), byNumber(3, 25), byID(vs[1].ID, 25)}, prompts.Change{})
		s.invalid(err, "split[2].version_id")
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(2, 50), byNumber(2, 50)}, prompts.Change{})
		s.invalid(err, "split[1].version_number") // the same number twice
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(2, 50), byNumber(3, 0)}, prompts.Change{})
		s.invalid(err, "split[1].weight")
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(2, 50)}, prompts.Change{})
		s.invalid(err, "split") // one entry is not a split
		_, err = s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2),
			Split: prompts.Split{byNumber(2, 50), byNumber(3, 50)}})
		s.invalid(err, "split")        // a version and a split
		is.Equal(s.snapshot(), before) // nothing changed
		is.Equal(s.revision(p.ID), rev)
		is.Equal(len(s.deployments(p.ID, "")), 1) // no record
	}},
	{"a split's entries are resolved in order: the first at fault is the error", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 2)
		before := s.snapshot()
		_, err := s.split(p.ID, prompts.Production, prompts.Split{byID(vs[0].ID, 1), byNumber(1, 1), byNumber(9, 1)}, prompts.Change{})
		s.invalid(err, "split[1].version_number") // names split[0]'s version, before the unknown split[2]
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byID(vs[0].ID, 1), byNumber(9, 1), byNumber(1, 1)}, prompts.Change{})
		is.True(errors.Is(err, prompts.ErrNotFound)) // the unknown split[1], before split[2] repeats split[0]
		is.Equal(s.snapshot(), before)
	}},
	{"setting the split held is not guarded, even when a partial of it has gone since", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		s.version(p.ID, "Hi {{name}}")
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{> footer}} {{name}}", TemplateFormat: prompts.FormatDotprompt})
		is.NoErr(err) // 2, which includes footer
		footer := s.prompt(proj.ID, "footer")
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: footer.ID, Content: "bye", Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
		a, err := s.split(p.ID, prompts.Production, prompts.Split{byNumber(1, 1), byNumber(2, 1)}, prompts.Change{})
		is.NoErr(err)
		_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: footer.ID, Environment: prompts.Production, Force: true})
		is.NoErr(err) // the partial gone
		again, err := s.split(p.ID, prompts.Production, prompts.Split{byNumber(1, 1), byNumber(2, 1)}, prompts.Change{})
		is.NoErr(err)                        // the same split: nothing changes, nothing is guarded
		is.Equal(again.Revision, a.Revision) // the revision stays
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(1, 2), byNumber(2, 1)}, prompts.Change{})
		is.True(errors.Is(err, prompts.ErrPartialUnavailable)) // another split is guarded
	}},
	{"the promotion guard holds for every version of a split not served there already, atomically, unless allowed", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		v1 := s.version(p.ID, "Hi {{name}}", prompts.Production) // 1, active
		s.version(p.ID, "Hello {{ name }}!")                     // 2: the same variables
		v3 := s.version(p.ID, "Hi {{place}}")                    // 3: others
		// refused checks that err is the promotion guard's, and that
		// nothing changed since the state before was taken.
		var (
			before  string
			rev     int64
			records int
		)
		taken := func() { before, rev, records = s.snapshot(), s.revision(p.ID), len(s.deployments(p.ID, "")) }
		refused := func(err error) {
			is.Helper()
			is.True(errors.Is(err, prompts.ErrVariablesChanged)) // refused by the promotion guard
			is.Equal(s.snapshot(), before)                       // nothing changed
			is.Equal(s.revision(p.ID), rev)                      // the revision stays
			is.Equal(len(s.deployments(p.ID, "")), records)      // no record
		}
		taken()
		for _, sp := range []prompts.Split{
			{byNumber(1, 50), byNumber(3, 50)},
			{byNumber(3, 50), byNumber(2, 50)},
		} {
			_, err := s.split(p.ID, prompts.Production, sp, prompts.Change{})
			refused(err) // a version's variables differ from those of the one active
		}

		_, err := s.split(p.ID, prompts.Production, prompts.Split{byNumber(1, 50), byNumber(2, 50)}, prompts.Change{})
		is.NoErr(err) // the same variables pass
		taken()
		refused(s.activate(p.ID, 3, prompts.Production, prompts.Change{})) // one version over a split is guarded against each of its versions
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{other}}", Environments: []prompts.Environment{prompts.Production}})
		refused(err) // so is a version created active there

		// A canary of 3, allowed: the split now holds versions whose
		// variables differ.
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(1, 90), byNumber(3, 10)}, prompts.Change{AllowVariableChange: true})
		is.NoErr(err) // allowed
		taken()
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
		refused(err) // a rollback to a split is guarded: 2, not served now, against 3

		// The versions served now pass: re-weighting and reordering them
		// need no AllowVariableChange.
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(1, 60), byNumber(3, 40)}, prompts.Change{})
		is.NoErr(err) // re-weighted
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byID(v3.ID, 50), byNumber(1, 50)}, prompts.Change{})
		is.NoErr(err) // re-weighted and reordered, an entry by id
		is.Equal(s.served(p.ID, prompts.Production), "v3:50,v1:50")

		// A version not served now is compared with each one served.
		taken()
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(3, 40), byNumber(1, 40), byNumber(2, 20)}, prompts.Change{})
		refused(err)                                                       // 2 added: its variables differ from 3's
		refused(s.activate(p.ID, 2, prompts.Production, prompts.Change{})) // 2 alone: likewise
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{place}} {{name}}", Environments: []prompts.Environment{prompts.Production}})
		refused(err) // a version created active there: its variables differ from each one's

		// Finishing the canary: 3, served now, alone.
		is.NoErr(s.activate(p.ID, 3, prompts.Production, prompts.Change{}))
		is.Equal(s.served(p.ID, prompts.Production), "v3")
		taken()
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
		refused(err) // back to the split: 1, not served now, against 3
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Change: prompts.Change{AllowVariableChange: true}})
		is.NoErr(err) // unless allowed
		is.Equal(s.served(p.ID, prompts.Production), "v3:50,v1:50")

		_, err = s.split(p.ID, prompts.Staging, prompts.Split{byNumber(1, 50), byNumber(3, 50)}, prompts.Change{})
		is.NoErr(err) // nothing active in staging: nothing to guard
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionID: prompts.Some(v1.ID)})
		is.NoErr(err) // the split's first entry alone, by id: served there now
		is.Equal(s.served(p.ID, prompts.Staging), "v1")
	}},
	{"the partials guard holds for every version of a split, and a partial's split is active", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		header := s.prompt(proj.ID, "header")
		s.versions(header.ID, 2)
		main := s.prompt(proj.ID, "main")
		s.dp(main.ID, "no partial")
		s.dp(main.ID, "{{> header}} and more")
		before := s.snapshot()
		_, err := s.split(main.ID, prompts.Production, prompts.Split{byNumber(1, 90), byNumber(2, 10)}, prompts.Change{})
		namesIn(t, err, prompts.CodePartialUnavailable, `"header"`, "production") // its second version's partial
		is.Equal(s.snapshot(), before)                                            // nothing changed
		_, err = s.split(main.ID, prompts.Staging, prompts.Split{byNumber(1, 90), byNumber(2, 10)}, prompts.Change{AllowMissingPartials: true})
		is.NoErr(err) // unless allowed

		_, err = s.split(header.ID, prompts.Production, prompts.Split{byNumber(2, 1), byNumber(1, 1)}, prompts.Change{})
		is.NoErr(err) // the partial holds a split
		_, err = s.split(main.ID, prompts.Production, prompts.Split{byNumber(1, 90), byNumber(2, 10)}, prompts.Change{})
		is.NoErr(err) // which counts as active
	}},
	{"a prompt that a version of a split includes cannot be deactivated unless forced", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		header := s.prompt(proj.ID, "header")
		s.version(header.ID, "Hello", prompts.Production)
		main := s.prompt(proj.ID, "main")
		s.dp(main.ID, "no partial")
		s.dp(main.ID, "{{> header}} and more")
		_, err := s.split(main.ID, prompts.Production, prompts.Split{byNumber(1, 90), byNumber(2, 10)}, prompts.Change{})
		is.NoErr(err)
		before := s.snapshot()
		_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: header.ID, Environment: prompts.Production})
		namesIn(t, err, prompts.CodePartialInUse, `"main"`, `"header"`) // the split's second version includes it
		is.Equal(s.snapshot(), before)
		_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: header.ID, Environment: prompts.Production, Force: true})
		is.NoErr(err) // forced
	}},
	{"a protected environment takes a split only with AllowProtected", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		s.versions(p.ID, 2)
		s.env(proj.ID, prompts.Production, true)
		sp := prompts.Split{byNumber(1, 50), byNumber(2, 50)}
		before := s.snapshot()
		_, err := s.deployer().Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: sp})
		s.forbidden(err)
		is.Equal(s.snapshot(), before) // nothing changed
		_, err = s.split(p.ID, prompts.Production, sp, prompts.Change{AllowProtected: true})
		is.NoErr(err) // allowed
		is.Equal(s.served(p.ID, prompts.Production), "v1:50,v2:50")
		_, err = s.deployer().Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, Split: sp})
		is.NoErr(err) // an unprotected one takes it from anyone who deploys
	}},
	{"a split that expects another revision is refused; one that expects the current one goes through", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		s.versions(p.ID, 3)
		rev := s.revision(p.ID)
		a, err := s.split(p.ID, prompts.Production, prompts.Split{byNumber(1, 50), byNumber(2, 50)}, prompts.Change{IfRevision: rev})
		is.NoErr(err) // the current revision
		is.True(a.Revision > rev)
		before := s.snapshot()
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(2, 50), byNumber(3, 50)}, prompts.Change{IfRevision: rev})
		is.True(errors.Is(err, prompts.ErrPreconditionFailed)) // the revision before: refused
		is.Equal(s.snapshot(), before)                         // nothing changed
		_, err = s.split(p.ID, prompts.Production, prompts.Split{byNumber(2, 50), byNumber(3, 50)}, prompts.Change{IfRevision: a.Revision})
		is.NoErr(err) // the revision now
		is.Equal(s.served(p.ID, prompts.Production), "v2:50,v3:50")
	}},
	{"an environment holding a split cannot be removed", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		s.env(proj.ID, "canary", false)
		p := s.prompt(proj.ID, "k")
		s.versions(p.ID, 2)
		_, err := s.split(p.ID, "canary", prompts.Split{byNumber(1, 50), byNumber(2, 50)}, prompts.Change{})
		is.NoErr(err)
		is.True(errors.Is(s.DeleteEnvironment(ctx, proj.ID, "canary"), prompts.ErrConflict)) // a split is active there
		is.Equal(s.envText(proj.ID), "production staging canary")                            // and it stays
		is.NoErr(s.deactivate(ctx, p.ID, "canary"))
		is.NoErr(s.DeleteEnvironment(ctx, proj.ID, "canary")) // nothing active: removed
	}},
	{"a version created with environments replaces a split there", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		s.versions(p.ID, 2)
		sp := prompts.Split{byNumber(1, 50), byNumber(2, 50)}
		for _, env := range prompts.Environments {
			_, err := s.split(p.ID, env, sp, prompts.Change{})
			is.NoErr(err)
		}
		_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "three", Actor: "ci", Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
		is.Equal(s.served(p.ID, prompts.Production), "v3")       // replaced
		is.Equal(s.served(p.ID, prompts.Staging), "v1:50,v2:50") // another environment keeps its split
		is.Equal(recordTexts(s.deployments(p.ID, prompts.Production))[0], s.records([]string{"activate production v3<-v1:50,v2:50 ci -"})[0])
	}},
	{"a render with a subject renders the versions a split serves it, its partials' too", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		header := s.prompt(proj.ID, "header")
		s.dp(header.ID, "H1")
		s.dp(header.ID, "H2")
		_, err := s.split(header.ID, prompts.Production, prompts.Split{byNumber(1, 1), byNumber(2, 1)}, prompts.Change{})
		is.NoErr(err)
		main := s.prompt(proj.ID, "main")
		s.dp(main.ID, "A {{> header}}")
		s.dp(main.ID, "B {{> header}}")
		_, err = s.split(main.ID, prompts.Production, prompts.Split{byNumber(1, 1), byNumber(2, 1)}, prompts.Change{})
		is.NoErr(err)
		seen := map[string]bool{}
		for i := range 40 {
			subject := "s" + strconv.Itoa(i)
			m := prompts.SplitEntry(prompts.SplitPoint(main.ID, prompts.Production, subject), []int{1, 1})
			h := prompts.SplitEntry(prompts.SplitPoint(header.ID, prompts.Production, subject), []int{1, 1})
			want := []string{"A", "B"}[m] + " " + []string{"H1", "H2"}[h]
			out, err := s.render(prompts.RenderRequest{PromptID: main.ID, Subject: subject})
			is.NoErr(err)            // render with a subject
			is.Equal(out.Text, want) // each prompt's pick, its own
			seen[want] = true
		}
		is.Equal(len(seen), 4) // every pair served someone
		out, err := s.render(prompts.RenderRequest{PromptID: main.ID})
		is.NoErr(err)
		is.Equal(out.Text, "A H1") // without a subject, the first entries
	}},
	{"concurrent splits and activations leave a chain of records, each starting where the one before ended", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		const versions = 4
		s.versions(p.ID, versions)
		const writers, changes = 6, 12
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for c := range changes {
					n := (w+c)%versions + 1
					var err error
					switch (w + c) % 4 {
					case 0:
						_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(n)})
					case 1:
						sp := prompts.Split{byNumber(n, 1+w), byNumber(n%versions+1, 1+c)}
						_, err = s.split(p.ID, prompts.Production, sp, prompts.Change{})
					case 2:
						_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: prompts.Production})
					case 3:
						_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
						if errors.Is(err, prompts.ErrConflict) {
							err = nil // nothing to roll back to, at times
						}
					}
					if err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		all := s.deployments(p.ID, prompts.Production)
		is.True(len(all) > 0)
		was := "none" // what production pointed at before the oldest record
		for i := len(all) - 1; i >= 0; i-- {
			d := all[i]
			is.Equal(stateText(d.PreviousVersionID, d.PreviousVersionNumber, d.PreviousSplit), was) // each record starts where the one before ended
			was = stateText(d.VersionID, d.VersionNumber, d.Split)
			is.True(was != "broken") // and names what it ended at consistently
			if i > 0 {
				is.True(all[i-1].ID > d.ID) // in the order of their ids
			}
		}
		is.Equal(s.served(p.ID, prompts.Production), was) // the newest record ends where production is
	}},
}

var splitEventTests = []test{
	{"a deployment.created event carries the split and the split replaced", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		vs := s.versions(p.ID, 3)
		s.eventLog()
		last := s.lastEvent()
		_, err := s.split(p.ID, prompts.Production, prompts.Split{byNumber(1, 60), byNumber(2, 40)}, prompts.Change{})
		is.NoErr(err)
		is.NoErr(s.activate(p.ID, 3, prompts.Production, prompts.Change{}))
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
		is.NoErr(err)
		evs := s.follow(&last)
		recs := s.newestRecords(p.ID, 3)
		is.Equal(len(evs), 3) // one event a change
		for i, e := range evs {
			is.Equal(eventText(e), deploymentEvent(proj.ID, recs[i])) // deployment.created with the record
			is.Equal(e.Deployment.Split, recs[i].Split)               // its split
			is.Equal(e.Deployment.PreviousSplit, recs[i].PreviousSplit)
		}
		want := prompts.Split{share(vs[0], 60), share(vs[1], 40)}
		is.Equal(evs[0].Deployment.Split, want)         // the split set
		is.Equal(evs[1].Deployment.PreviousSplit, want) // the split one version replaced
		is.Equal(evs[1].Deployment.Split, nil)
		is.Equal(evs[2].Deployment.Split, want) // the split a rollback restored
		is.Equal(evs[2].Deployment.Action, prompts.ActionRollback)
	}},
}
