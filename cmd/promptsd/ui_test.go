package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// webClient is a browser without scripts: a cookie jar, redirects not
// followed, the CSRF token of the last page kept.
type webClient struct {
	t    *testing.T
	root string // http://127.0.0.1:port
	c    *http.Client
	csrf string
	head http.Header // sent with every request
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func newWebClient(t *testing.T, s *server) *webClient {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &webClient{t: t, root: strings.TrimSuffix(s.base, "/v1/integration"), c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (w *webClient) do(method, path string, form url.Values) (*http.Response, string) {
	w.t.Helper()
	var body io.Reader
	if form != nil {
		if !form.Has("csrf") {
			form.Set("csrf", w.csrf)
		}
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, w.root+path, body)
	if err != nil {
		w.t.Fatal(err)
	}
	for k, v := range w.head {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := w.c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	if m := csrfRe.FindStringSubmatch(string(b)); m != nil {
		w.csrf = m[1]
	}
	return resp, string(b)
}

// A person signs in at /ui/ with the key the server printed, and writes,
// promotes and reads a prompt; the API sees it all, the key's name as
// the actor.
func TestServerServesTheWebUI(t *testing.T) {
	is := is.New(t)
	s := start(t, nil)
	root := strings.TrimSuffix(s.base, "/v1/integration")
	s.waitLog(t, regexp.MustCompile(regexp.QuoteMeta("Web UI: "+root+"/ui/"))) // the address is printed, once the store is open

	w := newWebClient(t, s)
	resp, body := w.do("GET", "/ui/", nil)
	is.Equal(resp.StatusCode, 200)
	is.True(strings.Contains(body, `<label for="key">API key</label>`))
	is.Equal(resp.Header.Get("X-Content-Type-Options"), "nosniff")
	is.True(strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "default-src 'self'"))
	resp, _ = w.do("POST", "/ui/signin", url.Values{"key": {s.key}})
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	resp, body = w.do("GET", "/ui/", nil)
	is.Equal(resp.StatusCode, 200)
	m := regexp.MustCompile(`<a href="/ui/projects/([0-9A-Z]{26})">Demo</a>`).FindStringSubmatch(body)
	is.True(m != nil) // the project made at start
	project := m[1]

	resp, _ = w.do("GET", "/ui/projects/"+project+"/prompts/new", nil)
	is.Equal(resp.StatusCode, 200)
	resp, _ = w.do("POST", "/ui/projects/"+project+"/prompts", url.Values{"key": {"support/greeting"}, "name": {"Greeting"}})
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	promptPath := resp.Header.Get("Location")
	is.True(strings.HasPrefix(promptPath, "/ui/prompts/"))
	resp, _ = w.do("POST", promptPath+"/versions", url.Values{"content": {"Hello {{name}}\r\n"}, "staging": {"1"}, "change_summary": {"first"}})
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	_, body = w.do("GET", promptPath+"/promote?version=1&environment=production", nil)
	rev := regexp.MustCompile(`name="revision" value="(\d+)"`).FindStringSubmatch(body)
	is.True(rev != nil)
	resp, _ = w.do("POST", promptPath+"/promote", url.Values{"version": {"1"}, "environment": {"production"}, "reason": {"ship it"}, "revision": {rev[1]}})
	is.Equal(resp.StatusCode, http.StatusSeeOther)

	id := strings.TrimPrefix(promptPath, "/ui/prompts/")
	var read prompt
	resp = s.call(t, "GET", "/prompts/"+id+"?environment=production", "", &read)
	is.Equal(resp.StatusCode, 200)
	is.Equal(read.ActiveVersion.Content, "Hello {{name}}\n")
	var history []struct {
		Environment string  `json:"environment"`
		Actor       *string `json:"actor"`
		Reason      *string `json:"reason"`
	}
	s.call(t, "GET", "/prompts/"+id+"/deployments", "", &history)
	is.Equal(len(history), 2)
	is.Equal(*history[0].Actor, "default") // the key's name
	is.Equal(*history[0].Reason, "ship it")

	// The access log names the routes, not the ids.
	resp, _ = w.do("GET", "/ui/no-such-page", nil)
	is.Equal(resp.StatusCode, 404)
	resp, _ = w.do("GET", "/ui", nil)
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	is.NoErr(s.stop(t))
	is.True(strings.Contains(s.out.String(), "/ui/prompts/{prompt_id}/promote"))
}

func TestServerWithoutTheWebUI(t *testing.T) {
	is := is.New(t)
	s := start(t, nil, "-ui=false")
	is.True(!strings.Contains(s.out.String(), "Web UI"))
	w := newWebClient(t, s)
	resp, _ := w.do("GET", "/ui/", nil)
	is.Equal(resp.StatusCode, http.StatusNotFound)
	var projects []project
	resp = s.call(t, "GET", "/projects", "", &projects)
	is.Equal(resp.StatusCode, 200) // the API is there
}
