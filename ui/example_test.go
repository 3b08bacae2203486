package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/ui"
)

// ExampleNew mounts the web interface at /admin/prompts/ beside the HTTP
// interface, both behind the same keys.
func ExampleNew() {
	store := memstore.New()
	keys := httpapi.NewKeys()
	// A real service reads the secret, or its sha256: hash, from its
	// secret store.
	if err := keys.Add(httpapi.Key{Name: "alice", Role: httpapi.RoleDeploy, Secret: "s3cr3t-key-0123456789"}); err != nil {
		log.Fatal(err)
	}
	web, err := ui.New(store, keys, ui.WithPrefix("/admin/prompts/"))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/prompts/", web)
	mux.Handle("/v1/integration/", httpapi.New(store, httpapi.WithAuthenticator(keys)))

	// Signed out, the prefix shows the sign-in form.
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/admin/prompts/", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println(strings.Contains(rec.Body.String(), `<form method="post" action="/admin/prompts/signin"`))
	fmt.Println(rec.Header().Get("X-Content-Type-Options"))
	// Output:
	// 200 text/html; charset=utf-8
	// true
	// nosniff
}

// sharedSessions is a SessionStore as replicas might share one (a table,
// a cache): encoded sessions under their ids. A map stands in for the
// shared store here; a real one would also forget entries at expires.
type sharedSessions struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *sharedSessions) Load(_ context.Context, id string) (ui.Session, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	if !ok {
		return ui.Session{}, false, nil
	}
	var sess ui.Session
	err := json.Unmarshal(b, &sess)
	return sess, err == nil, err
}

func (s *sharedSessions) Save(_ context.Context, id string, sess ui.Session, expires time.Time) error {
	b, err := json.Marshal(sess)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = b
	return nil
}

func (s *sharedSessions) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

// ExampleWithSessionStore gives the web interface a SessionStore that
// replicas could share. What it holds is no secret: each API key in it
// is sealed under its browser's cookie, and it is keyed by a hash of
// that cookie.
func ExampleWithSessionStore() {
	const key = "s3cr3t-key-0123456789"
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "alice", Role: httpapi.RoleDeploy, Secret: key}); err != nil {
		log.Fatal(err)
	}
	sessions := &sharedSessions{m: map[string][]byte{}}
	web, err := ui.New(memstore.New(), keys, ui.WithSessionStore(sessions))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(web)
	defer srv.Close()

	// A browser signs in: the sign-in form, then its POST.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	res, err := browser.Get(srv.URL + "/ui/")
	if err != nil {
		log.Fatal(err)
	}
	form, _ := io.ReadAll(res.Body)
	res.Body.Close()
	token := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(form)[1]
	res, err = browser.PostForm(srv.URL+"/ui/signin", url.Values{"key": {key}, "csrf": {string(token)}})
	if err != nil {
		log.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, strings.Contains(string(page), "Signed in as <strong>alice</strong>"))

	// The store holds one session, and no key.
	sessions.mu.Lock()
	defer sessions.mu.Unlock()
	for _, stored := range sessions.m {
		var s ui.Session
		_ = json.Unmarshal(stored, &s)
		fmt.Println(len(sessions.m), bytes.Contains(stored, []byte(key)), bytes.Contains(s.SealedKey, []byte(key)))
	}
	// Output:
	// 200 true
	// 1 false false
}
