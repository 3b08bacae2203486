package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// What a server sends is escaped before it reaches a terminal: an escape
// sequence in a prompt's content, name, a deployment's reason or an
// error's detail is shown as \x1b[…, not acted upon; the content keeps
// its lines and tabs; -json is exact JSON with no raw control character.
func TestServerTextIsEscaped(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	const content = "Hi \x1b[31mred\x1b[0m\x07\u009b2J\u202e\n\tindented\r\nend\rover"
	p := s.seed(t, "k", "Name \x1b]0;title\x07", ptr("desc\x1b[2J"), "", []string{content}, map[prompts.Environment]int{prompts.Production: 1})
	_, err := s.store.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(1),
		Change: prompts.Change{Reason: "why \x1b[8mhidden\u009b"}})
	is.NoErr(err)

	r := cli(t, s, nil, "get", "k")
	is.Equal(r.code, 0)
	is.Equal(r.stdout, `Hi \x1b[31mred\x1b[0m\a\u009b2J\u202e`+"\n\tindented\r\nend"+`\rover`) // lines and tabs kept, the rest escaped
	r = cli(t, s, nil, "render", "k")
	is.Equal(r.code, 0)
	is.True(!strings.ContainsAny(r.stdout, "\x1b\x07\u009b\u202e"))

	r = cli(t, s, nil, "history", "k")
	is.Equal(r.code, 0)
	is.True(!strings.ContainsAny(r.stdout, "\x1b\u009b"))
	is.True(strings.Contains(r.stdout, `why \x1b[8mhidden\u009b`))

	r = cli(t, s, nil, "get", "-json", "k")
	is.Equal(r.code, 0)
	is.True(!strings.ContainsAny(r.stdout, "\x1b\x07\u009b\u202e")) // JSON escapes them all
	var ans struct{ Content string }
	is.NoErr(json.Unmarshal([]byte(r.stdout), &ans))
	is.Equal(ans.Content, content) // and means the same

	dir := t.TempDir()
	r = cli(t, s, nil, "export", "-dir", dir)
	is.Equal(r.code, 0)
	r = cli(t, s, nil, "apply", "-dir", dir, "-dry-run")
	is.Equal(r.code, 0)
	is.True(!strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07\u009b"))
	r = cli(t, s, nil, "snapshot", "-o", "-")
	is.Equal(r.code, 0)
	is.True(!strings.ContainsAny(r.stdout, "\x1b\x07\u009b\u202e"))
}

// An error the server sends is one escaped line.
func TestServerErrorsAreEscaped(t *testing.T) {
	is := is.New(t)
	s := newServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost || r.Method == http.MethodPut {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusConflict)
				w.Write([]byte(`{"status":409,"code":"conflict","detail":"refused\u001b[2J\nprompts: all done\u009b"}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	s.seed(t, "k", "K", nil, "", []string{"a", "b"}, nil)
	r := cli(t, s, nil, "promote", "k", "-version", "2", "-environment", "staging")
	is.Equal(r.code, 1)
	is.True(!strings.ContainsAny(r.stderr, "\x1b\u009b"))
	is.True(strings.Contains(r.stderr, `refused\x1b[2J\nprompts: all done\u009b`)) // one line
	is.Equal(strings.Count(r.stderr, "\n"), 1)
}

// The command sends its key to the server's origin only: a server that
// redirects elsewhere gets an error naming where, and the other origin
// sees nothing.
func TestTheKeyStaysWithTheServer(t *testing.T) {
	is := is.New(t)
	var seen atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
	t.Cleanup(other.Close)
	s := newServer(t, func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		})
	})
	r := cli(t, s, nil, "get", "k")
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, other.URL)) // named
	is.Equal(seen.Load(), int64(0))
}
