package storetest

import (
	"slices"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// list is one of the three paged lists, as ids: the rules of paging hold
// for all three alike, so each paging test runs once per list, each time
// in a fresh store.
type list struct {
	name string
	desc bool // newest first
	// make creates n items in the store and returns the function that
	// lists them; list order is the order of creation (reversed for desc).
	make func(s *fixture, n int) func(p prompts.Page) ([]string, bool, error)
}

var lists = []list{
	{"projects", false, func(s *fixture, n int) func(prompts.Page) ([]string, bool, error) {
		for range n {
			s.project()
		}
		return func(p prompts.Page) ([]string, bool, error) {
			ps, more, err := s.ListProjects(s.t.Context(), prompts.ProjectFilter{Page: p})
			ids := make([]string, len(ps))
			for i, x := range ps {
				ids[i] = x.ID
			}
			return ids, more, err
		}
	}},
	{"prompts", false, func(s *fixture, n int) func(prompts.Page) ([]string, bool, error) {
		// In two projects taking turns, so that the list is not one
		// project's.
		projects := []string{s.project().ID, s.project().ID}
		for i := range n {
			s.prompt(projects[i%2], s.unique("p"))
		}
		return func(p prompts.Page) ([]string, bool, error) {
			ps, more, err := s.ListPrompts(s.t.Context(), prompts.PromptFilter{Page: p})
			ids := make([]string, len(ps))
			for i, x := range ps {
				ids[i] = x.ID
			}
			return ids, more, err
		}
	}},
	{"versions", true, func(s *fixture, n int) func(prompts.Page) ([]string, bool, error) {
		p := s.prompt(s.project().ID, "k")
		s.versions(p.ID, n)
		return func(pg prompts.Page) ([]string, bool, error) {
			vs, more, err := s.ListVersions(s.t.Context(), p.ID, pg)
			ids := make([]string, len(vs))
			for i, x := range vs {
				ids[i] = x.ID
			}
			return ids, more, err
		}
	}},
}

// pager lists pages of one list in one store.
type pager struct {
	t    *testing.T
	list func(p prompts.Page) ([]string, bool, error)
	ids  []string // every item, in list order
	desc bool
}

// fill makes n items of the list and returns a pager over them.
func (l list) fill(t *testing.T, s *fixture, n int) *pager {
	is := is.New(t)
	is.Helper()
	pg := &pager{t: t, list: l.make(s, n), desc: l.desc}
	ids, more, err := pg.list(prompts.Page{Limit: prompts.MaxLimit})
	is.NoErr(err)         // list everything
	is.True(!more)        // in one page
	is.Equal(len(ids), n) // every item is listed
	pg.ids = ids
	return pg
}

// page lists one page and fails the test on an error.
func (pg *pager) page(limit int, after string) ([]string, bool) {
	is := is.New(pg.t)
	is.Helper()
	ids, more, err := pg.list(prompts.Page{Limit: limit, After: after})
	is.NoErr(err) // list a page
	return ids, more
}

// between returns a well-formed id that no item has, just after item i
// in list order.
func (pg *pager) between(i int) string {
	if pg.desc {
		return pred(pg.ids[i])
	}
	return succ(pg.ids[i])
}

// pagingCases are the paging tests, each run once per list.
var pagingCases = []struct {
	name string
	run  func(t *testing.T, s *fixture, l list)
}{
	{"listed in order", func(t *testing.T, s *fixture, l list) {
		is := is.New(t)
		pg := l.fill(t, s, 5)
		for i := 1; i < len(pg.ids); i++ {
			if l.desc {
				is.True(pg.ids[i] < pg.ids[i-1]) // newest first: ids decrease
			} else {
				is.True(pg.ids[i] > pg.ids[i-1]) // oldest first: ids increase
			}
		}
		if l.name == "versions" {
			vs, _, err := s.ListVersions(t.Context(), s.promptIDs()[0], prompts.Page{})
			is.NoErr(err) // list versions
			for i, v := range vs {
				is.Equal(v.VersionNumber, len(vs)-i) // newest first: numbers decrease
			}
		}
		got, more := pg.page(0, "")
		is.Equal(got, pg.ids) // the first page is the same list
		is.True(!more)        // and the last
	}},
	{"page with limit and after", func(t *testing.T, s *fixture, l list) {
		is := is.New(t)
		pg := l.fill(t, s, 5)
		got, more := pg.page(2, "")
		is.Equal(got, pg.ids[:2]) // the first page
		is.True(more)             // more follow
		got, more = pg.page(2, got[1])
		is.Equal(got, pg.ids[2:4]) // the second page starts after the last item seen
		is.True(more)              // more follow
		got, more = pg.page(2, got[1])
		is.Equal(got, pg.ids[4:]) // the last page holds the rest
		is.True(!more)            // and says so
		var walked []string
		after := ""
		for range len(pg.ids) + 1 {
			got, more := pg.page(1, after)
			is.Equal(len(got), 1) // a page of one
			walked = append(walked, got...)
			if !more {
				break
			}
			after = got[0]
		}
		is.Equal(walked, pg.ids) // pages of one visit every item once, in order
	}},
	{"a full last page reports no more", func(t *testing.T, s *fixture, l list) {
		is := is.New(t)
		pg := l.fill(t, s, 4)
		got, more := pg.page(2, pg.ids[1])
		is.Equal(got, pg.ids[2:]) // the last page is full
		is.True(!more)            // and nothing follows it
		got, more = pg.page(4, "")
		is.Equal(got, pg.ids) // a first page that holds everything
		is.True(!more)        // says nothing follows, exactly at the boundary
		_, more = pg.page(3, "")
		is.True(more) // one short of the boundary, more follow
		got, more = pg.page(0, pg.ids[3])
		is.Equal(len(got), 0) // after the last item, nothing
		is.True(!more)        // and no more
	}},
	{"limit 0 means 100", func(t *testing.T, s *fixture, l list) {
		is := is.New(t)
		pg := l.fill(t, s, prompts.DefaultLimit+1)
		got, more := pg.page(0, "")
		is.Equal(got, pg.ids[:prompts.DefaultLimit]) // the default page holds 100 items
		is.True(more)                                // and more follow
		got, more = pg.page(0, got[len(got)-1])
		is.Equal(got, pg.ids[prompts.DefaultLimit:]) // the next page the rest
		is.True(!more)                               // and no more
		got, more = pg.page(prompts.MaxLimit, "")
		is.Equal(len(got), prompts.DefaultLimit+1) // limit 1000 takes everything
		is.True(!more)                             // with no more
	}},
	{"limit must be between 1 and 1000", func(t *testing.T, s *fixture, l list) {
		is := is.New(t)
		pg := l.fill(t, s, 2)
		for _, limit := range []int{-1, -1000, prompts.MaxLimit + 1, 1 << 31} {
			_, _, err := pg.list(prompts.Page{Limit: limit})
			s.invalid(err, "limit")
		}
		for _, limit := range []int{1, 2, prompts.MaxLimit} {
			got, _ := pg.page(limit, "")
			is.Equal(len(got), min(limit, 2)) // a limit in range is fine
		}
	}},
	{"after is a position, not an item", func(t *testing.T, s *fixture, l list) {
		is := is.New(t)
		pg := l.fill(t, s, 3)
		got, more := pg.page(0, pg.between(0))
		is.Equal(got, pg.ids[1:]) // a position between two items lists the ones after it
		is.True(!more)            // and no more
		got, _ = pg.page(1, pg.between(1))
		is.Equal(got, pg.ids[2:]) // also with a limit
		first, last := minID, maxID
		if l.desc {
			first, last = maxID, minID
		}
		got, _ = pg.page(0, first)
		is.Equal(got, pg.ids) // a position before every item lists them all
		got, more = pg.page(0, last)
		is.Equal(len(got), 0) // a position after every item lists none
		is.True(!more)        // and no more
	}},
	{"malformed after is invalid", func(t *testing.T, s *fixture, l list) {
		pg := l.fill(t, s, 2)
		for _, after := range malformedIDs(pg.ids[0]) {
			_, _, err := pg.list(prompts.Page{After: after})
			s.invalid(err, "after")
		}
	}},
}

// promptIDs returns the ids of every prompt, oldest first.
func (s *fixture) promptIDs() []string {
	is := is.New(s.t)
	is.Helper()
	ps, _, err := s.ListPrompts(s.t.Context(), prompts.PromptFilter{Page: prompts.Page{Limit: prompts.MaxLimit}})
	is.NoErr(err) // list prompts
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

// pagingTests is every paging case for every list, then the filters.
var pagingTests = append(listTests(), filterTests...)

func listTests() []test {
	var tests []test
	for _, c := range pagingCases {
		for _, l := range lists {
			tests = append(tests, test{l.name + ": " + c.name, func(t *testing.T, s *fixture) { c.run(t, s, l) }})
		}
	}
	return tests
}

var filterTests = []test{
	{"prompts filter by project", func(t *testing.T, s *fixture) {
		is := is.New(t)
		a, b, c := s.project().ID, s.project().ID, s.project().ID
		var inA, inC, all []string
		for i := range 3 {
			for _, proj := range []string{a, b, c} {
				id := s.prompt(proj, "k"+string(rune('0'+i))).ID
				all = append(all, id)
				switch proj {
				case a:
					inA = append(inA, id)
				case c:
					inC = append(inC, id)
				}
			}
		}
		var inAC []string
		for _, id := range all {
			if slices.Contains(inA, id) || slices.Contains(inC, id) {
				inAC = append(inAC, id)
			}
		}
		for _, tc := range []struct {
			projects []string
			want     []string
		}{
			{nil, all},
			{[]string{}, nil},
			{[]string{a}, inA},
			{[]string{c, a}, inAC},
			{[]string{a, c, a}, inAC},
			{[]string{a, unknownID, "junk"}, inA},
			{[]string{unknownID}, nil},
		} {
			got := s.listPrompts(prompts.PromptFilter{ProjectIDs: tc.projects}, 0)
			is.Equal(got, tc.want) // the prompts of these projects, oldest first
			got = s.listPrompts(prompts.PromptFilter{ProjectIDs: tc.projects}, 2)
			is.Equal(got, tc.want) // in pages of two too
		}
	}},
	{"projects filter by id", func(t *testing.T, s *fixture) {
		is := is.New(t)
		var all []string
		for range 4 {
			all = append(all, s.project().ID)
		}
		for _, tc := range []struct {
			ids  []string
			want []string
		}{
			{nil, all},
			{[]string{}, nil},
			{[]string{all[2], all[0]}, []string{all[0], all[2]}},
			{[]string{all[3], all[3], unknownID, "junk"}, []string{all[3]}},
			{[]string{unknownID}, nil},
		} {
			for _, limit := range []int{0, 1} {
				var got []string
				after := ""
				for range 10 {
					ps, more, err := s.ListProjects(t.Context(), prompts.ProjectFilter{IDs: tc.ids, Page: prompts.Page{Limit: limit, After: after}})
					is.NoErr(err) // list projects
					for _, p := range ps {
						got = append(got, p.ID)
					}
					if !more {
						break
					}
					after = ps[len(ps)-1].ID
				}
				is.Equal(got, tc.want) // the projects with these ids, oldest first
			}
		}
	}},
	{"prompts filter by key", func(t *testing.T, s *fixture) {
		is := is.New(t)
		a, b := s.project().ID, s.project().ID
		ga := s.prompt(a, "greeting").ID
		s.prompt(a, "other")
		s.prompt(a, "Greeting")
		gb := s.prompt(b, "greeting").ID
		for _, tc := range []struct {
			key      string
			projects []string
			want     []string
		}{
			{"greeting", nil, []string{ga, gb}},
			{"greeting", []string{b}, []string{gb}},
			{"greeting", []string{a, b}, []string{ga, gb}},
			{"greeting", []string{}, nil},
			{"GREETING", nil, nil},
			{"greet", nil, nil},
			{"missing", []string{a}, nil},
		} {
			got := s.listPrompts(prompts.PromptFilter{Key: tc.key, ProjectIDs: tc.projects}, 0)
			is.Equal(got, tc.want) // the prompts with this key
			got = s.listPrompts(prompts.PromptFilter{Key: tc.key, ProjectIDs: tc.projects}, 1)
			is.Equal(got, tc.want) // in pages of one too
		}
	}},
}

// listPrompts lists every page of the filter, limit items a page, and
// returns the ids; nil for none.
func (s *fixture) listPrompts(f prompts.PromptFilter, limit int) []string {
	is := is.New(s.t)
	is.Helper()
	var ids []string
	f.Limit = limit
	for range 100 {
		ps, more, err := s.ListPrompts(s.t.Context(), f)
		is.NoErr(err) // list prompts
		for _, p := range ps {
			ids = append(ids, p.ID)
		}
		if !more {
			return ids
		}
		is.True(len(ps) > 0) // a page followed by more holds something
		f.After = ps[len(ps)-1].ID
	}
	is.Fail() // the pages never end
	return nil
}
