package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/memstore"
)

// TestSameAsMemstore runs one scenario on memstore and on sqlstore, with the
// same clock, and compares every answer, JSON and errors alike, ids
// aside (they are random): PostgreSQL must not change a timestamp, a digit
// of metadata, a null or an error.
func TestSameAsMemstore(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 21, 22, 19, 26, 123456789, time.FixedZone("CET", 3600))
	mem := scenario(t, memstore.New(memstore.WithClock(fixedClock(at))))
	sql := scenario(t, newStore(t, fixedClock(at)))
	memLines, sqlLines := strings.Split(mem, "\n"), strings.Split(sql, "\n")
	for i := range min(len(memLines), len(sqlLines)) {
		if memLines[i] != sqlLines[i] {
			t.Errorf("line %d differs:\nmemstore: %s\nsqlstore: %s", i+1, memLines[i], sqlLines[i])
		}
	}
	is.Equal(len(memLines), len(sqlLines))                                       // as many answers
	is.True(strings.Contains(sql, `"created_at":"2026-11-21T21:19:26.123456Z"`)) // UTC, microseconds
	is.True(strings.Contains(sql, `1e400`))                                      // metadata keeps its digits
}

// ulids matches the ids in a transcript.
var ulids = regexp.MustCompile(`[0-7][0-9A-HJKMNP-TV-Z]{25}`)

// scenario drives s through every method and returns a transcript of the
// answers, each id replaced by its rank of first appearance.
func scenario(t *testing.T, s prompts.Store) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	out := func(what string, v any, err error) {
		b.WriteString(what + ": ")
		if err != nil {
			b.WriteString(describe(err))
		} else {
			b.Write(encode(v))
		}
		b.WriteByte('\n')
	}
	list := func(what string, n int, more bool, err error, item func(int) []byte) {
		b.WriteString(what + ": ")
		if err != nil {
			b.WriteString(describe(err) + "\n")
			return
		}
		for i := range n {
			b.Write(item(i))
			b.WriteByte(' ')
		}
		b.WriteString("more=" + strconv.FormatBool(more) + "\n")
	}
	ps := []prompts.Project{}
	for _, in := range []prompts.NewProject{
		{Name: "Support Bot", Description: "answers"},
		{Name: "Search", Slug: "search", IsPrivate: true},
		{Name: "Search again", Slug: "search"},
		{Name: " "},
	} {
		p, err := s.CreateProject(ctx, in)
		out("create project", p, err)
		if err == nil {
			ps = append(ps, p)
		}
	}
	a, c := ps[0].ID, ps[1].ID
	p, err := s.GetProject(ctx, c)
	out("get project", p, err)
	_, err = s.GetProject(ctx, "nope")
	out("get malformed project", prompts.Project{}, err)
	pl, more, err := s.ListProjects(ctx, prompts.ProjectFilter{Page: prompts.Page{Limit: 1}})
	list("list projects", len(pl), more, err, func(i int) []byte { return encode(pl[i]) })
	pl, more, err = s.ListProjects(ctx, prompts.ProjectFilter{IDs: []string{c, "bad", c}})
	list("list projects by ids", len(pl), more, err, func(i int) []byte { return encode(pl[i]) })

	desc := "says hello"
	var prs []prompts.Prompt
	for _, in := range []prompts.NewPrompt{
		{ProjectID: a, Key: "greeting", Name: "Greeting", Description: &desc},
		{ProjectID: a, Key: "farewell", Name: "Farewell"},
		{ProjectID: c, Key: "greeting", Name: "Greeting in c"},
		{ProjectID: a, Key: "greeting", Name: "Twice"},
		{ProjectID: a, Key: "Greeting", Name: "Case differs"},
		{ProjectID: prompts.NewID(time.Now()), Key: "k", Name: "No project"},
		{ProjectID: a, Key: "-bad", Name: "", Description: ptr("nul\x00")},
	} {
		pr, err := s.CreatePrompt(ctx, in)
		out("create prompt", pr, err)
		if err == nil {
			prs = append(prs, pr)
		}
	}
	g := prs[0].ID
	for _, in := range []prompts.NewVersion{
		{PromptID: g, Content: "Hello", Metadata: `{"n": 1e400, "f": 0.10000000000000000000001, "nested": {"a": [1, {"b": null}]}, "s": "\u00e9\n"}`},
		{PromptID: g, Content: "Hi", ChangeSummary: ptr("shorter"), Environments: []prompts.Environment{prompts.Staging, prompts.Production, prompts.Staging}},
		{PromptID: g, Content: "Hey", Metadata: "null", Environments: []prompts.Environment{prompts.Staging}},
		{PromptID: prompts.NewID(time.Now()), Content: "x"},
		{PromptID: "malformed", Content: "x"},
		{PromptID: g, Content: "", Metadata: `[1]`, Environments: []prompts.Environment{"dev"}},
	} {
		v, err := s.CreateVersion(ctx, in)
		out("create version", v, err)
	}
	for _, n := range []int{1, 3, 4, 0, -1, 1 << 40} {
		v, err := s.GetVersion(ctx, g, n)
		out("get version "+strconv.Itoa(n), detail(v), err)
	}
	_, err = s.GetVersion(ctx, prompts.NewID(time.Now()), 1)
	out("get version of unknown prompt", detail{}, err)
	vl, more, err := s.ListVersions(ctx, g, prompts.Page{Limit: 2})
	list("list versions", len(vl), more, err, func(i int) []byte { return encode(detail(vl[i])) })
	vl, more, err = s.ListVersions(ctx, g, prompts.Page{Limit: 2, After: vl[1].ID})
	list("list versions after", len(vl), more, err, func(i int) []byte { return encode(detail(vl[i])) })
	vl, more, err = s.ListVersions(ctx, prs[1].ID, prompts.Page{})
	list("list no versions", len(vl), more, err, func(i int) []byte { return encode(detail(vl[i])) })
	_, _, err = s.ListVersions(ctx, prompts.NewID(time.Now()), prompts.Page{})
	list("list versions of unknown prompt", 0, false, err, nil)

	for _, env := range []prompts.Environment{prompts.Production, prompts.Staging, "dev"} {
		ap, err := s.GetActive(ctx, g, env)
		out("get active "+string(env), ap, err)
		ap, err = s.GetActiveByKey(ctx, a, "greeting", env)
		out("get active by key "+string(env), ap, err)
	}
	ap, err := s.GetActive(ctx, prs[1].ID, prompts.Production)
	out("get active, none", ap, err)
	ap, err = s.GetActiveByKey(ctx, a, "nope", prompts.Production)
	out("get active by unknown key", ap, err)
	ap, err = s.GetActiveByKey(ctx, prompts.NewID(time.Now()), "greeting", prompts.Production)
	out("get active by key of unknown project", ap, err)
	ap, err = s.GetActiveByKey(ctx, prompts.NewID(time.Now()), "bad key\x00", prompts.Production)
	out("get active by malformed key of unknown project", ap, err)
	ap, err = s.GetActiveByKey(ctx, a, "bad key\x00", prompts.Production)
	out("get active by malformed key", ap, err)

	for _, in := range []prompts.Activation{
		{PromptID: g, Environment: prompts.Production, VersionNumber: prompts.Some(1)},
		{PromptID: g, Environment: prompts.Staging, VersionID: prompts.Some(vl0(s, g))},
		{PromptID: g, Environment: prompts.Staging, VersionID: prompts.Some(vl0(s, g))},
		{PromptID: g, Environment: prompts.Staging, VersionNumber: prompts.Some(9)},
		{PromptID: g, Environment: prompts.Staging, VersionID: prompts.Some("bogus")},
		{PromptID: g, Environment: prompts.Staging, VersionID: prompts.Some(prompts.NewID(time.Now()))},
		{PromptID: prompts.NewID(time.Now()), Environment: prompts.Staging, VersionNumber: prompts.Some(1)},
		{PromptID: g, Environment: "dev", VersionNumber: prompts.Some(1), VersionID: prompts.Some("x")},
	} {
		ap, err := s.Activate(ctx, in)
		out("activate", ap, err)
	}
	err = deactivate(ctx, s, g, prompts.Staging)
	out("deactivate", ok{}, err)
	err = deactivate(ctx, s, g, prompts.Staging)
	out("deactivate again", ok{}, err)
	err = deactivate(ctx, s, prompts.NewID(time.Now()), prompts.Staging)
	out("deactivate unknown", ok{}, err)
	ap, err = s.GetActive(ctx, g, prompts.Staging)
	out("get active after deactivate", ap, err)

	for _, in := range []prompts.PromptUpdate{
		{},
		{Name: prompts.Some("Greeting 2"), Description: prompts.Null[string]()},
		{Key: prompts.Some("farewell")},
		{Key: prompts.Some("greeting2"), Description: prompts.Some("back")},
		{Key: prompts.Null[string](), Name: prompts.Some("")},
	} {
		pr, err := s.UpdatePrompt(ctx, g, in)
		out("update prompt", pr, err)
	}
	_, err = s.UpdatePrompt(ctx, prompts.NewID(time.Now()), prompts.PromptUpdate{Name: prompts.Some("x")})
	out("update unknown prompt", prompts.Prompt{}, err)
	for _, f := range []prompts.PromptFilter{
		{},
		{Page: prompts.Page{Limit: 2}},
		{Page: prompts.Page{After: g}},
		{ProjectIDs: []string{a}},
		{ProjectIDs: []string{c, a, "x"}},
		{ProjectIDs: []string{}},
		{Key: "greeting"},
		{Key: "greeting", ProjectIDs: []string{c}},
		{Key: "greeting2", ProjectIDs: []string{a, c}},
		{Key: "bad key"},
		{Page: prompts.Page{Limit: 1001, After: "x"}},
	} {
		pl, more, err := s.ListPrompts(ctx, f)
		list(fmt.Sprintf("list prompts %+v", f), len(pl), more, err, func(i int) []byte { return encode(pl[i]) })
	}

	// Ids by rank of first appearance.
	rank := map[string]string{}
	return ulids.ReplaceAllStringFunc(b.String(), func(id string) string {
		r, ok := rank[id]
		if !ok {
			r = fmt.Sprintf("<id%d>", len(rank)+1)
			rank[id] = r
		}
		return r
	})
}

// vl0 returns the id of the newest version of a prompt.
func vl0(s prompts.Store, promptID string) string {
	vs, _, _ := s.ListVersions(context.Background(), promptID, prompts.Page{Limit: 1})
	if len(vs) == 0 {
		return ""
	}
	return vs[0].ID
}

// ok stands for an answer without a value.
type ok struct{}

// detail is a version encoded with its change summary.
type detail prompts.PromptVersion

// encode renders an answer as the interface's JSON, and a prompt's
// revision after it.
func encode(v any) []byte {
	switch v := v.(type) {
	case prompts.Project:
		return mustJSON(api.FromProject(v))
	case prompts.Prompt:
		return fmt.Appendf(mustJSON(api.FromPrompt(v)), " revision %d", v.Revision)
	case prompts.ActivePrompt:
		return fmt.Appendf(api.AppendActive(nil, v), " revision %d", v.Revision)
	case prompts.PromptVersion:
		return mustJSON(api.FromVersion(v))
	case detail:
		return mustJSON(api.FromVersionDetail(prompts.PromptVersion(v)))
	case ok:
		return []byte("ok")
	}
	panic(fmt.Sprintf("encode: %T", v))
}

// describe renders an error by its code, message and fields, which the
// stores must agree on, leaving out the cause.
func describe(err error) string {
	var e *prompts.Error
	if !errors.As(err, &e) {
		return "not a *prompts.Error: " + err.Error()
	}
	s := fmt.Sprintf("error %s %q", e.Code, e.Message)
	for _, f := range e.Fields {
		s += fmt.Sprintf(" [%s: %s]", f.Field, f.Detail)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func mustJSON(v any) []byte {
	b, err := api.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
