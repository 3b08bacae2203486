package httpapi_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// eventFields are the members of an event.
var eventFields = sortedFields("id", "type", "project_id", "prompt_id", "created_at", "data")

// needEvents skips a test whose store keeps no event log or webhooks
// (sqlstore, until it does).
func needEvents(t *testing.T, s prompts.Store) {
	t.Helper()
	if _, ok := prompts.EventLogOf(s); !ok {
		t.Skipf("the store (%T) keeps no event log (prompts.EventLog): the event routes answer 501", s)
	}
	if _, ok := prompts.WebhookStoreOf(s); !ok {
		t.Skipf("the store (%T) keeps no webhooks (prompts.WebhookStore): the webhook routes answer 501", s)
	}
}

// lacks reports whether a route of allRoutes needs what the store does
// not keep (it answers 501 then).
func lacks(s prompts.Store, pattern string) bool {
	_, events := prompts.EventLogOf(s)
	_, hooks := prompts.WebhookStoreOf(s)
	_, keys := prompts.KeyStoreOf(s)
	switch {
	case strings.HasPrefix(pattern, "/v1/integration/keys"):
		return !keys
	case strings.HasPrefix(pattern, "/v1/integration/events"):
		return !events
	case strings.HasPrefix(pattern, "/v1/integration/webhooks"):
		return !hooks
	}
	return false
}

// movable is a clock that tests move on.
type movable struct{ offset atomic.Int64 }

func (m *movable) now() time.Time      { return time.Now().Add(time.Duration(m.offset.Load())) }
func (m *movable) add(d time.Duration) { m.offset.Add(int64(d)) }

// ids returns the ids of a page of events, as numbers.
func eventIDs(t *testing.T, events []map[string]any) []int64 {
	t.Helper()
	var out []int64
	for _, e := range events {
		n, err := strconv.ParseInt(e["id"].(string), 10, 64)
		if err != nil {
			t.Fatalf("event id %q is not a decimal string", e["id"])
		}
		out = append(out, n)
	}
	return out
}

func TestEventsListTheLogOldestFirstInPages(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	p := e.newPrompt(e.project.ID)
	id := p["id"].(string)
	v := e.newVersion(id, `{"content":"hi","environments":["production","staging"]}`)

	all := e.do("GET", "/v1/integration/events", "")
	is.Equal(all.status, 200)
	is.Equal(all.header.Get("Link"), "") // one page
	events := all.arr(t)
	var types []string
	for _, ev := range events {
		is.Equal(keysOf(ev), eventFields)
		types = append(types, ev["type"].(string))
	}
	// The two projects of the fixture, then the prompt, then the version
	// and its two deployment records, the version first.
	is.Equal(types, []string{"project.created", "project.created", "prompt.created", "version.created", "deployment.created", "deployment.created"})
	ids := eventIDs(t, events)
	for i := 1; i < len(ids); i++ {
		is.True(ids[i] > ids[i-1]) // oldest first
	}
	is.Equal(events[0]["prompt_id"], nil) // a project's event
	is.Equal(events[0]["data"].(map[string]any)["id"], e.project.ID)
	is.Equal(events[2]["data"].(map[string]any)["key"], p["key"]) // the prompt as list 5 answers it
	is.Equal(events[3]["data"].(map[string]any)["id"], v["id"])
	is.Equal(keysOf(events[3]["data"].(map[string]any)), versionDetailFields)
	is.True(timestampRE.MatchString(events[3]["created_at"].(string)))

	// Paged with limit and Link, relative, after the last id.
	var walked []int64
	r := e.do("GET", "/v1/integration/events?limit=4", "")
	for {
		is.Equal(r.status, 200)
		walked = append(walked, eventIDs(t, r.arr(t))...)
		next := r.next(t)
		if next == nil {
			break
		}
		is.True(strings.HasPrefix(r.header.Get("Link"), "<?limit=4&after=")) // a relative reference
		r = e.do("GET", strings.TrimPrefix(next.String(), e.srv.URL), "")
	}
	is.Equal(walked, ids)
	after := e.do("GET", "/v1/integration/events?after="+strconv.FormatInt(ids[3], 10), "")
	is.Equal(eventIDs(t, after.arr(t)), ids[4:])
	is.Equal(len(e.do("GET", "/v1/integration/events?after="+strconv.FormatInt(ids[5]+100, 10), "").arr(t)), 0) // a position: it need not exist
}

func TestEventsQueryIsChecked(t *testing.T) {
	e := newEnv(t)
	needEvents(t, e.store)
	for _, c := range []struct {
		query string
		want  int
		field string
	}{
		{"after=0", 400, "after"},
		{"after=-1", 400, "after"},
		{"after=abc", 400, "after"},
		{"after=1.5", 400, "after"},
		{"after=+1", 400, "after"},
		{"after=", 400, "after"},
		{"after=99999999999999999999", 400, "after"},
		{"after=1&after=2", 400, "after"},
		{"limit=0", 400, "limit"},
		{"limit=1001", 400, "limit"},
		{"limit=x", 400, "limit"},
		{"project_id=%00", 400, "project_id"},
		{"project_id=01ARZ3NDEKTSV4RRFFQ69G5FAV", 404, ""}, // unknown
		{"project_id=nope", 404, ""},                       // malformed: not found
		{"project_id=" + e.other.ID, 200, ""},
		{"after=1&limit=1000", 200, ""},
	} {
		t.Run(c.query, func(t *testing.T) {
			is := is.New(t)
			r := e.call(e.key, "GET", "/v1/integration/events?"+c.query, "")
			is.Equal(r.status, c.want)
			if c.field != "" {
				is.Equal(fieldsOf(t, r), []string{c.field})
			}
		})
	}
}

// A key sees the events of its projects only; another project's, even
// named, is 404 as lists answer it.
func TestEventsOfTheKeysProjectsOnly(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	mine := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(mine, `{"content":"a"}`)
	theirs := e.newPrompt(e.other.ID)["id"].(string)
	e.newVersion(theirs, `{"content":"b"}`)

	own := e.call(e.ownKey, "GET", "/v1/integration/events", "")
	is.Equal(own.status, 200)
	is.Equal(len(own.arr(t)), 3) // its project, prompt and version
	for _, ev := range own.arr(t) {
		is.Equal(ev["project_id"], e.project.ID)
	}
	is.True(!strings.Contains(string(own.body), e.other.ID)) // nothing of the other project
	is.True(!strings.Contains(string(own.body), theirs))
	hidden := e.call(e.ownKey, "GET", "/v1/integration/events?project_id="+e.other.ID, "")
	unknown := e.call(e.ownKey, "GET", "/v1/integration/events?project_id=01ARZ3NDEKTSV4RRFFQ69G5FAV", "")
	is.Equal(hidden.status, 404)
	is.Equal(string(hidden.body), string(unknown.body)) // exactly as if it did not exist
	one := e.call(e.key, "GET", "/v1/integration/events?project_id="+e.other.ID, "")
	is.Equal(len(one.arr(t)), 3)
	for _, ev := range one.arr(t) {
		is.Equal(ev["project_id"], e.other.ID)
	}
	// Paging a filtered log: the Link goes on after the last event shown.
	first := e.call(e.ownKey, "GET", "/v1/integration/events?limit=2", "")
	is.Equal(len(first.arr(t)), 2)
	rest := e.call(e.ownKey, "GET", strings.TrimPrefix(first.next(t).String(), e.srv.URL), "")
	is.Equal(len(rest.arr(t)), 1)
	is.Equal(rest.arr(t)[0]["prompt_id"], mine)
}

// Reading after an event the retention removed is 410 events_expired,
// for the list and for the stream, before it starts.
func TestEventsExpired(t *testing.T) {
	is := is.New(t)
	clock := &movable{}
	e := newEnvWith(t, setup{clock: clock.now})
	needEvents(t, e.store)
	first := eventIDs(t, e.do("GET", "/v1/integration/events", "").arr(t))[0]
	clock.add(prompts.DefaultEventRetention + time.Hour)
	e.newPrompt(e.project.ID) // a write applies the retention

	r := e.do("GET", "/v1/integration/events?after="+strconv.FormatInt(first, 10), "")
	is.Equal(r.status, 410)
	is.Equal(r.problem(t)["code"], "events_expired")
	is.True(strings.Contains(r.problem(t)["detail"].(string), "read everything again"))
	kept := e.do("GET", "/v1/integration/events", "").arr(t)
	is.Equal(len(kept), 1) // the new prompt's; the projects' are gone
	is.Equal(kept[0]["type"], "prompt.created")

	res, _ := e.openStream(t, e.key, "", "Last-Event-ID", strconv.FormatInt(first, 10))
	is.Equal(res.status, 410) // before the stream starts
	is.Equal(res.problem(t)["code"], "events_expired")
}

// A store without the event log, or webhooks, answers 501 on their
// routes, after authentication and the role; so does a cache over one,
// which claims neither (prompts.EventLogOf finds none under it); and so
// does a store whose event log says errors.ErrUnsupported (a client of a
// server without one).
func TestWithoutEventsOrWebhooks501(t *testing.T) {
	for name, wrap := range map[string]func(prompts.Store) prompts.Store{
		"a bare store":       func(s prompts.Store) prompts.Store { return bareStore{s} },
		"a cache over one":   func(s prompts.Store) prompts.Store { return cache.New(bareStore{s}, cache.Standalone()) },
		"an unsupported log": func(s prompts.Store) prompts.Store { return unsupportedLog{bareStore{s}} },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnvWith(t, setup{store: wrap})
			for _, rt := range allRoutes {
				if !lacks(bareStore{}, rt.pattern) {
					continue
				}
				t.Run(rt.method+" "+rt.pattern, func(t *testing.T) {
					is := is.New(t)
					path := strings.ReplaceAll(fill(rt.pattern, e.project.ID, "", 0), "{webhook_id}", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
					body := fill(rt.body, e.project.ID, "", 0)
					r := e.do(rt.method, path, body)
					is.Equal(r.status, 501)
					is.Equal(r.problem(t)["code"], "not_implemented")
					is.Equal(e.call("", rt.method, path, body).status, 401) // authentication first
				})
			}
			is := is.New(t)
			r := e.do("GET", "/v1/integration/events", "", "Accept", "text/event-stream")
			is.Equal(r.status, 501) // the stream too
		})
	}
}

// bareStore is a Store and nothing else.
type bareStore struct{ prompts.Store }

// unsupportedLog is a Store with an event log that says
// errors.ErrUnsupported.
type unsupportedLog struct{ prompts.Store }

func (unsupportedLog) ListEvents(context.Context, prompts.EventFilter) ([]prompts.Event, bool, error) {
	return nil, false, errors.ErrUnsupported
}

func (unsupportedLog) WaitEvents(context.Context, int64) error { return errors.ErrUnsupported }

func (unsupportedLog) LastEventID(context.Context) (int64, error) { return 0, errors.ErrUnsupported }
