package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/webhook"
)

var (
	webhookFields    = sortedFields("id", "url", "events", "project_id", "created_at")
	newWebhookFields = sortedFields("id", "url", "events", "project_id", "secret", "created_at")
	attemptFields    = sortedFields("id", "event_id", "attempt", "at", "status_code", "error", "duration_ms")
	secretRE         = regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`)
)

func TestWebhookCreateReadListDelete(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	r := e.do("POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/hooks?token=t","events":["prompt.created","version.created"]}`)
	is.Equal(r.status, 200)
	created := r.obj(t)
	is.Equal(keysOf(created), newWebhookFields)
	is.True(secretRE.MatchString(created["secret"].(string))) // whsec_ and 32 bytes in base64
	is.Equal(created["url"], "https://198.51.100.7/hooks?token=t")
	is.Equal(created["events"], []any{"prompt.created", "version.created"})
	is.Equal(created["project_id"], nil) // every project
	is.True(timestampRE.MatchString(created["created_at"].(string)))

	read := e.do("GET", r.location(t).Path, "")
	is.Equal(read.status, 200)
	got := read.obj(t)
	is.Equal(keysOf(got), webhookFields) // no secret
	delete(created, "secret")
	is.Equal(got, created)
	list := e.do("GET", "/v1/integration/webhooks", "")
	is.Equal(list.arr(t), []map[string]any{created})
	is.True(!strings.Contains(string(list.body), "whsec_")) // shown once only

	all := e.do("POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/all","events":[],"project_id":null}`).obj(t)
	is.Equal(all["events"], []any{}) // every type
	one := e.do("POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/one","project_id":"`+e.project.ID+`"}`).obj(t)
	is.Equal(one["project_id"], e.project.ID)
	is.True(one["secret"] != all["secret"])

	is.Equal(e.do("DELETE", "/v1/integration/webhooks/"+got["id"].(string), "").status, 204)
	is.Equal(e.do("GET", "/v1/integration/webhooks/"+got["id"].(string), "").status, 404)
	is.Equal(e.do("DELETE", "/v1/integration/webhooks/"+got["id"].(string), "").status, 404)
	is.Equal(e.do("GET", "/v1/integration/webhooks/nope", "").status, 404)
	is.Equal(len(e.do("GET", "/v1/integration/webhooks", "").arr(t)), 2)
}

// What a webhook may subscribe to and where it may send is checked
// before anything is stored: no loopback, private, link-local,
// unspecified or multicast host, unless the handler allows them.
func TestWebhookInputAndSafeTargets(t *testing.T) {
	e := newEnv(t)
	needEvents(t, e.store)
	for _, c := range []struct {
		body, field string
	}{
		{`{}`, "url"},
		{`{"url":null}`, "url"},
		{`{"url":""}`, "url"},
		{`{"url":"/relative"}`, "url"},
		{`{"url":"ftp://198.51.100.7/"}`, "url"},
		{`{"url":"https://user:pw@198.51.100.7/"}`, "url"},
		{`{"url":1}`, "url"},
		{`{"url":"https://198.51.100.7/","events":["prompt.deleted"]}`, "events"},
		{`{"url":"https://198.51.100.7/","events":["prompt.created","prompt.created"]}`, "events"},
		{`{"url":"https://198.51.100.7/","events":"prompt.created"}`, "events"},
		{`{"url":"https://198.51.100.7/","project_id":1}`, "project_id"},
		{`{"url":"https://198.51.100.7/","secret":"whsec_x"}`, "secret"}, // not the client's to choose
		{`{"url":"http://127.0.0.1:8080/hook"}`, "url"},
		{`{"url":"http://localhost/hook"}`, "url"}, // resolves to a loopback address
		{`{"url":"http://[::1]/hook"}`, "url"},
		{`{"url":"http://[::ffff:127.0.0.1]/hook"}`, "url"},
		{`{"url":"http://10.1.2.3/hook"}`, "url"},
		{`{"url":"http://192.168.1.1/hook"}`, "url"},
		{`{"url":"http://169.254.169.254/latest/meta-data"}`, "url"},
		{`{"url":"http://0.0.0.0/hook"}`, "url"},
		{`{"url":"http://224.0.0.1/hook"}`, "url"},
	} {
		t.Run(c.body, func(t *testing.T) {
			is := is.New(t)
			r := e.do("POST", "/v1/integration/webhooks", c.body)
			is.Equal(r.status, 400)
			is.Equal(fieldsOf(t, r), []string{c.field})
		})
	}
	is := is.New(t)
	is.Equal(len(e.do("GET", "/v1/integration/webhooks", "").arr(t)), 0) // nothing stored
	detail := e.do("POST", "/v1/integration/webhooks", `{"url":"http://localhost/hook"}`).problem(t)["detail"].(string)
	is.True(strings.Contains(detail, "loopback")) // says why

	var observed atomic.Int64 // a refused URL is the client's error, not the store's
	watched := e.withHandler(httpapi.WithAuthenticator(newKeysFor(t, e.key)),
		httpapi.WithErrorObserver(func(*http.Request, error) { observed.Add(1) }))
	is.Equal(watched.do("POST", "/v1/integration/webhooks", `{"url":"http://localhost/hook"}`).status, 400)
	is.Equal(observed.Load(), int64(0))

	open := e.withHandler(httpapi.WithAuthenticator(newKeysFor(t, e.key)), httpapi.AllowPrivateWebhooks())
	for _, u := range []string{"http://127.0.0.1:8080/hook", "http://localhost/hook", "http://10.1.2.3/hook", "http://[::1]/hook"} {
		is.Equal(open.do("POST", "/v1/integration/webhooks", `{"url":"`+u+`"}`).status, 200) // allowed
	}
	is.Equal(open.do("POST", "/v1/integration/webhooks", `{"url":"ftp://10.1.2.3/"}`).status, 400) // the form still counts
}

// A key restricted to projects creates webhooks of its projects only,
// and sees those whose projects are all among its own.
func TestWebhooksOfTheKeysProjects(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	everything := e.do("POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/all"}`).obj(t)["id"].(string)
	r := e.call(e.ownKey, "POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/own"}`)
	is.Equal(r.status, 200)
	own := r.obj(t)
	is.Equal(own["project_id"], e.project.ID) // absent: the key's projects, here one
	theirs := e.call(e.otherKey, "POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/other"}`).obj(t)["id"].(string)

	hidden := e.call(e.ownKey, "POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/x","project_id":"`+e.other.ID+`"}`)
	unknown := e.call(e.ownKey, "POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/x","project_id":"01ARZ3NDEKTSV4RRFFQ69G5FAV"}`)
	is.Equal(hidden.status, 404)
	is.Equal(string(hidden.body), string(unknown.body)) // as if it did not exist
	is.Equal(e.call(e.key, "POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/x","project_id":"nope"}`).status, 404)

	list := e.call(e.ownKey, "GET", "/v1/integration/webhooks", "").arr(t)
	is.Equal(len(list), 1)
	is.Equal(list[0]["id"], own["id"])
	for _, id := range []string{everything, theirs} {
		for _, path := range []string{"", "/deliveries"} {
			r := e.call(e.ownKey, "GET", "/v1/integration/webhooks/"+id+path, "")
			is.Equal(r.status, 404) // not its own
			is.Equal(string(r.body), string(e.call(e.ownKey, "GET", "/v1/integration/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV"+path, "").body))
		}
		is.Equal(e.call(e.ownKey, "DELETE", "/v1/integration/webhooks/"+id, "").status, 404)
		is.Equal(e.do("GET", "/v1/integration/webhooks/"+id, "").status, 200) // still there
	}
	is.Equal(len(e.do("GET", "/v1/integration/webhooks", "").arr(t)), 3) // a key of every project sees them all

	// A key of both projects: its webhook is of both (project_id null),
	// which a key of one of them does not see.
	both := e.withHandler(httpapi.WithAuthenticator(newKeysFor(t, "both-projects-key", e.project.ID, e.other.ID)))
	two := both.call("both-projects-key", "POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/two"}`).obj(t)
	is.Equal(two["project_id"], nil)
	is.Equal(len(both.call("both-projects-key", "GET", "/v1/integration/webhooks", "").arr(t)), 3) // its own, own's and other's
	is.Equal(e.call(e.ownKey, "GET", "/v1/integration/webhooks/"+two["id"].(string), "").status, 404)
	wh, err := e.store.(prompts.WebhookStore).GetWebhook(context.Background(), two["id"].(string))
	is.NoErr(err)
	is.Equal(len(wh.ProjectIDs), 2) // of its two projects, not of every one

	// A key of no project: no webhook of nothing.
	none := e.withHandler(httpapi.WithAuthenticator(authFunc(func(context.Context, string) (httpapi.Access, error) {
		return httpapi.Access{Name: "none", Role: httpapi.RoleAdmin}, nil
	})))
	r = none.call("k", "POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/none"}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"project_id"})
	is.Equal(len(none.call("k", "GET", "/v1/integration/webhooks", "").arr(t)), 0)
}

// The list pages as lists do; a restricted key's pages hold its webhooks
// only, and walk to the end.
func TestWebhookListPages(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	var mine []any
	for i := range 7 {
		key := e.ownKey
		if i%2 == 1 {
			key = e.otherKey
		}
		id := e.call(key, "POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/`+itoa(i)+`"}`).obj(t)["id"]
		if key == e.ownKey {
			mine = append(mine, id)
		}
	}
	walk := func(key string, limit int) []any {
		var ids []any
		r := e.call(key, "GET", "/v1/integration/webhooks?limit="+itoa(limit), "")
		for {
			is.Equal(r.status, 200)
			a := r.arr(t)
			is.True(len(a) <= limit)
			for _, w := range a {
				ids = append(ids, w["id"])
			}
			next := r.next(t)
			if next == nil {
				return ids
			}
			r = e.call(key, "GET", strings.TrimPrefix(next.String(), e.srv.URL), "")
		}
	}
	is.Equal(len(walk(e.key, 3)), 7)
	is.Equal(walk(e.ownKey, 1), mine)
	is.Equal(walk(e.ownKey, 2), mine)
	is.Equal(walk(e.ownKey, 100), mine)
}

// receiver is a webhook receiver that checks each delivery's signature.
type receiver struct {
	t      *testing.T
	secret string
	mu     sync.Mutex
	bodies [][]byte
	ids    []string
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(400)
		return
	}
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if err := webhook.Verify(rv.secret, r.Header, body, time.Now(), 0); err != nil {
		rv.t.Errorf("a delivery that does not verify: %v", err)
		w.WriteHeader(401)
		return
	}
	rv.bodies = append(rv.bodies, body)
	rv.ids = append(rv.ids, r.Header.Get(webhook.HeaderID))
	w.WriteHeader(204)
}

func (rv *receiver) received() int {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return len(rv.bodies)
}

// Deliveries, made by a dispatcher to receivers, are listed newest first;
// what a receiver gets is the event as GET /events lists it, as the
// document's webhooks section describes it.
func TestWebhookDeliveries(t *testing.T) {
	is := is.New(t)
	e := newEnvWith(t, setup{opts: []httpapi.Option{httpapi.AllowPrivateWebhooks()}})
	needEvents(t, e.store)
	rv := &receiver{t: t}
	srv := httptest.NewServer(rv)
	defer srv.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens there any more

	created := e.do("POST", "/v1/integration/webhooks", `{"url":"`+srv.URL+`/hook","events":["prompt.created"],"project_id":"`+e.project.ID+`"}`).obj(t)
	rv.mu.Lock()
	rv.secret = created["secret"].(string)
	rv.mu.Unlock()
	hook := "/v1/integration/webhooks/" + created["id"].(string)
	failing := "/v1/integration/webhooks/" + e.do("POST", "/v1/integration/webhooks", `{"url":"`+gone.URL+`/hook"}`).obj(t)["id"].(string)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	d := webhook.NewDispatcher(e.store.(prompts.WebhookStore), webhook.AllowPrivate(), webhook.WithPoll(10*time.Millisecond))
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()

	p1 := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(p1, `{"content":"not subscribed to"}`)
	e.newPrompt(e.other.ID) // another project
	p2 := e.newPrompt(e.project.ID)["id"].(string)
	is.True(waitFor(5*time.Second, func() bool { return rv.received() == 2 }))
	is.True(waitFor(5*time.Second, func() bool {
		return len(e.do("GET", failing+"/deliveries", "").arr(t)) >= 4 // one a new event
	}))

	events := e.do("GET", "/v1/integration/events?project_id="+e.project.ID, "").arr(t)
	var want []map[string]any
	for _, ev := range events {
		if ev["type"] == "prompt.created" {
			want = append(want, ev)
		}
	}
	is.Equal(len(want), 2)
	doc, err := loadDoc()
	is.NoErr(err)
	schema := doc.doc.Webhooks["event"].Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	byID := map[any]map[string]any{want[0]["id"]: want[0], want[1]["id"]: want[1]}
	rv.mu.Lock()
	for i, body := range rv.bodies { // in any order: deliveries run concurrently
		var got map[string]any
		is.NoErr(json.Unmarshal(body, &got))
		is.Equal(got, byID[rv.ids[i]])                                   // the event as the log lists it, webhook-id its id
		is.NoErr(schema.VisitJSON(got, openapi3.EnableJSONSchema2020())) // as the document says
		is.True(!bytes.Contains(body, []byte("\n")))
	}
	is.True(rv.ids[0] != rv.ids[1])
	rv.mu.Unlock()
	is.Equal(want[0]["prompt_id"], p1)
	is.Equal(want[1]["prompt_id"], p2)

	attempts := e.do("GET", hook+"/deliveries", "").arr(t)
	is.Equal(len(attempts), 2)
	for _, a := range attempts {
		is.Equal(keysOf(a), attemptFields)
		is.True(byID[a["event_id"]] != nil) // a string, the event's id
		is.Equal(a["attempt"], json.Number("1"))
		is.Equal(a["status_code"], json.Number("204"))
		is.Equal(a["error"], nil)
		is.True(timestampRE.MatchString(a["at"].(string)))
	}
	is.True(attempts[0]["id"].(string) > attempts[1]["id"].(string)) // newest first
	page := e.do("GET", hook+"/deliveries?limit=1", "")
	is.Equal(page.arr(t)[0]["id"], attempts[0]["id"])
	is.Equal(e.do("GET", strings.TrimPrefix(page.next(t).String(), e.srv.URL), "").arr(t)[0]["id"], attempts[1]["id"])

	failed := e.do("GET", failing+"/deliveries", "").arr(t)[0]
	is.Equal(failed["status_code"], nil) // no answer
	is.True(failed["error"] != nil)      // and why
}
