package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// pages follows the Link rel=next of a list from path, and returns every
// page.
func (e *env) pages(t *testing.T, path string) []resp {
	t.Helper()
	var out []resp
	r := e.do("GET", path, "")
	for {
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", r.url, r.status, r.body)
		}
		out = append(out, r)
		next := r.next(t)
		if next == nil {
			return out
		}
		r = e.do("GET", strings.TrimPrefix(next.String(), e.srv.URL+e.prefix), "")
	}
}

// A list answer stops before the item that would take its body past
// MaxListBody: fewer items than asked for, and a Link to the rest, which
// comes whole, in order, each item once. The events' list alike.
func TestListAnswersStopAtMaxListBody(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ctx := context.Background()
	p, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.project.ID, Key: "large", Name: "Large"})
	is.NoErr(err)
	content := strings.Repeat("x", 900<<10)
	var want []string
	for i := range 6 {
		v, err := e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content + itoa(i)})
		is.NoErr(err)
		want = append([]string{v.ID}, want...) // newest first
	}
	pages := e.pages(t, "/v1/integration/prompts/"+p.ID+"/versions?limit=100")
	is.Equal(len(pages), 2) // 4 versions of 900 KiB fit in 4 MiB, not 5
	var got []string
	for _, r := range pages {
		is.True(len(r.body) <= httpapi.MaxListBody)
		for _, v := range r.arr(t) {
			got = append(got, v["id"].(string))
		}
	}
	is.Equal(len(pages[0].arr(t)), 4)
	is.Equal(got, want) // each once, in order

	if _, ok := e.store.(prompts.EventLog); ok {
		var all []int64
		pages := e.pages(t, "/v1/integration/events?limit=1000")
		is.True(len(pages) >= 2) // the events hold the versions: more than 4 MiB
		for _, r := range pages {
			is.True(len(r.body) <= httpapi.MaxListBody)
			all = append(all, eventIDs(t, r.arr(t))...)
		}
		var stored []int64
		f := prompts.EventFilter{Limit: 1}
		for {
			page, more, err := e.store.(prompts.EventLog).ListEvents(ctx, f)
			is.NoErr(err)
			for _, ev := range page {
				stored = append(stored, ev.ID)
			}
			if !more {
				break
			}
			f.After = page[len(page)-1].ID
		}
		is.Equal(all, stored) // every event, each once, in order
	}
}

// An item larger than MaxListBody comes alone on its page.
func TestListAnswerHoldsOneItemAtLeast(t *testing.T) {
	is := is.New(t)
	e := newEnvWith(t, setup{opts: []httpapi.Option{httpapi.WithBodyLimit(8 << 20)}})
	ctx := context.Background()
	p, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.project.ID, Key: "huge", Name: "Huge"})
	is.NoErr(err)
	for range 2 {
		_, err := e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: strings.Repeat("y", httpapi.MaxListBody)})
		is.NoErr(err)
	}
	pages := e.pages(t, "/v1/integration/prompts/"+p.ID+"/versions")
	is.Equal(len(pages), 2)
	for _, r := range pages {
		is.Equal(len(r.arr(t)), 1)
	}
}
