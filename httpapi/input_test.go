package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

func TestBadInput(t *testing.T) {
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	prompts := "/v1/integration/prompts"
	versions := "/v1/integration/prompts/" + id + "/versions"
	for _, tc := range []struct {
		name, path, body string
		detail           string // the detail holds this
		fields           []string
	}{
		{"malformed JSON", prompts, `{"key":`, "not valid JSON", nil},
		{"malformed JSON inside", prompts, `{"key" "x"}`, "not valid JSON", nil},
		{"a bare word", prompts, `hello`, "not valid JSON", nil},
		{"single quotes", prompts, `{'key':'x'}`, "not valid JSON", nil},
		{"a raw control character in a string", prompts, "{\"name\":\"a\x01\"}", "not valid JSON", nil},
		{"an array", prompts, `[]`, "must be a JSON object", nil},
		{"a string", prompts, `"x"`, "must be a JSON object", nil},
		{"a number", prompts, `42`, "must be a JSON object", nil},
		{"null", prompts, `null`, "must be a JSON object", nil},
		{"only white space", prompts, " \n\t", "is empty", nil},
		{"a second object", prompts, `{} {}`, "data after the JSON object", nil},
		{"trailing garbage", prompts, `{}x`, "data after the JSON object", nil},
		{"a trailing brace", prompts, `{}}`, "data after the JSON object", nil},
		{"a wrong type", prompts, `{"project_id":"` + e.project.ID + `","key":1,"name":"N"}`, "key must be a string", []string{"key"}},
		{"wrong types", prompts, `{"project_id":true,"key":[],"name":{}}`, "project_id must be a string", []string{"project_id", "key", "name"}},
		{"an unknown field", prompts, `{"project_id":"` + e.project.ID + `","key":"k","name":"N","color":"red"}`, `color is not a known field`, []string{"color"}},
		{"a field in another case", prompts, `{"project_id":"` + e.project.ID + `","Key":"k","name":"N"}`, `did you mean "key"`, []string{"Key"}},
		{"a field given twice", prompts, `{"project_id":"` + e.project.ID + `","key":"k","key":"j","name":"N"}`, "more than once", []string{"key"}},
		{"metadata without the underscore", versions, `{"content":"c","metadata":{}}`, `did you mean "metadata_"`, []string{"metadata"}},
		{"content a number", versions, `{"content":1}`, "content must be a string", []string{"content"}},
		{"change_summary an object", versions, `{"content":"c","change_summary":{}}`, "change_summary must be a string", []string{"change_summary"}},
		{"created_at given", versions, `{"content":"c","created_at":"2026-01-01T00:00:00.000000Z"}`, "created_at is not a known field", []string{"created_at"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := e.do("POST", tc.path, tc.body)
			is.Equal(r.status, 400)
			p := r.problem(t)
			is.Equal(p["code"], "invalid_request")
			is.True(strings.Contains(p["detail"].(string), tc.detail)) // the detail names the problem
			if tc.fields != nil {
				is.Equal(fieldsOf(t, r), tc.fields)
			}
		})
	}
	is := is.New(t)
	is.Equal(len(e.do("GET", "/v1/integration/prompts", "").arr(t)), 1)               // no refused request created a prompt
	is.Equal(len(e.do("GET", versions, "").arr(t)), 0)                                // nor a version
	is.Equal(e.do("POST", prompts, "").status, 400)                                   // no body at all
	is.Equal(e.do("PATCH", "/v1/integration/prompts/"+id, `{"nam":"x"}`).status, 400) // PATCH refuses unknown fields too
	is.Equal(e.do("PUT", "/v1/integration/prompts/"+id+"/environments/staging", `{"version":1}`).status, 400)
}

func TestMediaType(t *testing.T) {
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	body := `{"name":"N"}`
	for _, tc := range []struct {
		contentType string
		status      int
	}{
		{"application/json", 200},
		{"application/json; charset=utf-8", 200},
		{"Application/JSON", 200},
		{"application/json;charset=\"utf-8\"", 200},
		{"<none>", 200}, // a missing Content-Type is read as JSON
		{"text/plain", 415},
		{"application/x-www-form-urlencoded", 415},
		{"application/merge-patch+json", 415},
		{"application/jsonx", 415},
		{"json", 415},
		{"multipart/form-data; boundary=x", 415},
	} {
		t.Run(tc.contentType, func(t *testing.T) {
			is := is.New(t)
			r := e.do("PATCH", "/v1/integration/prompts/"+id, body, "Content-Type", tc.contentType)
			is.Equal(r.status, tc.status)
			if tc.status == 415 {
				is.Equal(r.problem(t)["code"], "unsupported_media_type")
			}
		})
	}
	is := is.New(t)
	is.Equal(e.do("PATCH", "/v1/integration/prompts/"+id, `{bad`, "Content-Type", "text/plain").status, 415) // media type before syntax
	is.Equal(e.do("PATCH", "/v1/integration/prompts/nope", body, "Content-Type", "text/plain").status, 415)  // and before existence
	is.Equal(e.do("POST", "/v1/integration/prompts", `{}`, "Content-Type", "text/xml").status, 415)          // every route with a body
	is.Equal(e.do("POST", "/v1/integration/prompts/"+id+"/versions", `{}`, "Content-Type", "text/xml").status, 415)
	is.Equal(e.do("PUT", "/v1/integration/prompts/"+id+"/environments/prod", `{}`, "Content-Type", "text/xml").status, 415)
}

func TestBodyLimit(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	path := "/v1/integration/prompts/" + id + "/versions"
	content := strings.Repeat("x", 1<<20)
	r := e.do("POST", path, `{"content":"`+content+`"}`)
	is.Equal(r.status, 413) // over the default 1 MiB
	is.Equal(r.problem(t)["code"], "payload_too_large")
	is.Equal(e.do("POST", path, `{"content":"`+content[:1<<20-100]+`"}`).status, 200) // under it

	small := e.withHandler(httpapi.WithAuthenticator(newKeysFor(t, e.key)), httpapi.WithBodyLimit(100))
	body := `{"content":"` + strings.Repeat("y", 100-14) + `"}`
	is.Equal(len(body), 100)
	is.Equal(small.do("POST", path, body).status, 200)                                                   // exactly the limit
	is.Equal(small.do("POST", path, body+" ").status, 413)                                               // one byte over
	is.Equal(small.do("POST", path, `{"content":`+strings.Repeat(" ", 200)).status, 413)                 // size before syntax
	is.Equal(small.do("POST", path, strings.Repeat(" ", 200), "Content-Type", "text/plain").status, 415) // media type before size

	unset := e.withHandler(httpapi.WithAuthenticator(newKeysFor(t, e.key)), httpapi.WithBodyLimit(0))
	is.Equal(unset.do("POST", path, `{"content":"`+content[:1<<20-100]+`"}`).status, 200) // a limit below 1 keeps the default
	is.Equal(unset.do("POST", path, `{"content":"`+content+`"}`).status, 413)

	// A body of unknown length (chunked) is cut at the limit too.
	req, err := http.NewRequest("POST", small.srv.URL+path, io.MultiReader(strings.NewReader(body), strings.NewReader(strings.Repeat(" ", 1000))))
	is.NoErr(err)
	req.ContentLength = -1
	req.Header.Set("X-API-Key", e.key)
	is.Equal(small.send(req).status, 413)

	// A body longer than its declared length (which net/http does not
	// send, but a middleware that replaced the body might) is cut at the
	// limit all the same.
	h := httpapi.New(e.store, httpapi.WithAuthenticator(newKeysFor(t, e.key)), httpapi.WithBodyLimit(100))
	for _, declared := range []int64{0, 10, 100} {
		r := httptest.NewRequest("POST", path, strings.NewReader(body+strings.Repeat(" ", 1<<20)))
		r.ContentLength = declared
		r.Header.Set("X-API-Key", e.key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		is.Equal(w.Code, 413) // declared short, read to the limit
	}
}

// A body that does not arrive before the server's read deadline is
// answered 408, before the connection closes.
func TestSlowBody(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	h := httpapi.New(e.store, httpapi.WithAuthenticator(newKeysFor(t, e.key)))
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Config.WriteTimeout = 5 * time.Second
	srv.Start()
	t.Cleanup(srv.Close)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	is.NoErr(err)
	defer conn.Close()
	body := `{"content":"hello"}`
	_, err = fmt.Fprintf(conn, "POST /v1/integration/prompts/%s/versions HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		id, e.key, len(body), body[:5]) // the rest never comes
	is.NoErr(err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	is.NoErr(err) // an answer, not a closed connection
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusRequestTimeout)
	var p map[string]any
	is.NoErr(json.NewDecoder(resp.Body).Decode(&p))
	is.Equal(p["code"], "request_timeout")

	vs, _, err := e.store.ListVersions(context.Background(), id, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(vs), 0) // nothing written
}

// A body that is not valid UTF-8, or whose \u escapes name half of a
// surrogate pair, is 400: never read with U+FFFD in place of the bad
// bytes. A name given twice in any object of a body is 400 naming the
// member. Nothing refused is stored.
func TestBodyTextAndDuplicateNames(t *testing.T) {
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"Hi {{name}}","environments":["production"]}`)
	versions := "/v1/integration/prompts/" + id + "/versions"
	render := "/v1/integration/prompts/" + id + "/render"
	for _, tc := range []struct {
		name, path, body string
		detail           string // the detail holds this
		field            string // the field named, if any
	}{
		{"a bad byte in content", versions, "{\"content\":\"a\xffb\"}", "not valid UTF-8 (at byte 13)", ""},
		{"a truncated sequence in metadata", versions, "{\"content\":\"c\",\"metadata_\":{\"a\":\"\xc3\"}}", "not valid UTF-8", ""},
		{"a bad byte in a name", versions, "{\"content\":\"c\",\"\xfe\":1}", "not valid UTF-8", ""},
		{"a lone surrogate escape", versions, `{"content":"\ud800"}`, "surrogate", ""},
		{"a surrogate escape in reverse order", versions, `{"content":"\udc00\ud800"}`, "surrogate", ""},
		{"a member twice", versions, `{"content":"a","content":"b"}`, "more than once", "content"},
		{"a member twice in metadata_", versions, `{"content":"c","metadata_":{"a":1,"b":2,"a":3}}`, `"metadata_.a" twice`, "metadata_.a"},
		{"a member twice deep in metadata_", versions, `{"content":"c","metadata_":{"x":{"y":[1,{"z":1,"z":{}}]}}}`, "twice", "metadata_.x.y[1].z"},
		{"a member twice, once escaped", versions, `{"content":"c","metadata_":{"model":"a","\u006dodel":"b"}}`, "twice", "metadata_.model"},
		{"a variable twice", render, `{"variables":{"name":"a","name":"b"}}`, "twice", "variables.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			before := len(e.do("GET", versions, "").arr(t))
			r := e.do("POST", tc.path, tc.body)
			is.Equal(r.status, 400)
			p := r.problem(t)
			is.Equal(p["code"], "invalid_request")
			is.True(strings.Contains(p["detail"].(string), tc.detail)) // the detail names the problem
			if tc.field != "" {
				is.Equal(fieldsOf(t, r), []string{tc.field}) // and the member
			}
			is.Equal(len(e.do("GET", versions, "").arr(t)), before) // nothing stored
		})
	}
	is := is.New(t)
	r := e.do("POST", versions, `{"content":"\ud83d\ude00 \u00e9","metadata_":{"a":{"b":1},"c":{"b":2},"d":[{"b":1},{"b":2}]}}`)
	is.Equal(r.status, 200)                       // a surrogate pair, and one name in several objects
	is.Equal(r.obj(t)["content"], "\U0001F600 é") // read as the characters they name
	r = e.do("POST", versions, "{\"content\":\"\uFFFD is a character\"}")
	is.Equal(r.status, 200) // U+FFFD itself, well encoded, is text like any other
}

// A body nesting deeper than the decoder's bound is 400, and so is
// metadata_ nesting past its own rule; neither takes the server down.
func TestDeepBodies(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	versions := "/v1/integration/prompts/" + id + "/versions"
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	r := e.do("POST", versions, `{"content":"c","metadata_":`+deep(10001)+`}`)
	is.Equal(r.status, 400) // past the decoder's bound
	is.True(strings.Contains(r.problem(t)["detail"].(string), "not valid JSON"))
	r = e.do("POST", versions, `{"content":"c","metadata_":`+deep(5000)+`}`)
	is.Equal(r.status, 400) // within it, past metadata_'s 32 levels
	is.Equal(fieldsOf(t, r), []string{"metadata_"})
	is.Equal(len(e.do("GET", versions, "").arr(t)), 0) // nothing stored
}
