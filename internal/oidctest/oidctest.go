// Package oidctest starts a real OpenID Connect provider for tests: the
// program in internal/testop (zitadel/oidc's example provider), built
// once per version of its source and run as a process of its own, on a
// free port of 127.0.0.1. It is a module of its own, so that the
// provider's dependencies stay out of the main module's go.mod, and a
// process, since the example provider keeps its clients in a global
// registry and sets the process's default logger. Its people and clients are listed in
// internal/testop's documentation.
package oidctest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The provider's clients, their secret, and every person's password.
const (
	ClientID         = "prompts"          // claims in the ID token
	UserinfoClientID = "prompts-userinfo" // claims at the userinfo endpoint only
	ClientSecret     = "prompts-secret"
	Password         = "secret-password"
)

// Its people.
const (
	Alice = "alice@example.com"  // groups prompt-admins
	Dave  = "dave@example.com"   // groups prompt-writers
	Bob   = "bob@elsewhere.test" // no groups
	Carol = "carol@example.com"  // groups prompt-admins, email not verified
	Erin  = "erin@example.com"   // groups prompt-admins, email not verified and no email_verified claim
)

// Provider is a running provider.
type Provider struct {
	Issuer string // with its trailing "/"
}

// Start builds (once) and starts a provider, stopped when the test ends.
func Start(t testing.TB) *Provider {
	t.Helper()
	bin, err := build()
	if err != nil {
		t.Fatalf("oidctest: building the provider: %v", err)
	}
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("oidctest: starting the provider: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close() // it stops when its stdin closes
		if err := cmd.Wait(); err != nil {
			t.Errorf("oidctest: the provider: %v", err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("oidctest: reading the provider's issuer: %v", err)
	}
	go io.Copy(io.Discard, stdout)
	return &Provider{Issuer: strings.TrimSpace(line)}
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// build compiles internal/testop into the temporary directory, under a
// name that changes with its source, so that runs and packages share it.
func build() (string, error) {
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		dir := filepath.Join(filepath.Dir(file), "..", "testop")
		h := sha256.New()
		for _, name := range []string{"go.mod", "go.sum", "main.go"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				buildErr = err
				return
			}
			h.Write(b)
		}
		out := filepath.Join(os.TempDir(), "prompts-testop-"+hex.EncodeToString(h.Sum(nil))[:16])
		if _, err := os.Stat(out); err == nil {
			built = out
			return
		}
		tmp := fmt.Sprintf("%s.%d", out, os.Getpid())
		// go test puts its own go first in the PATH.
		cmd := exec.Command("go", "build", "-o", tmp, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%v: %s", err, b)
			return
		}
		// Renamed into place: packages tested at once build it side by side.
		if err := os.Rename(tmp, out); err != nil {
			buildErr = err
			return
		}
		built = out
	})
	return built, buildErr
}

var (
	idField = regexp.MustCompile(`name="id" value="([^"]+)"`)
)

// Login follows the sign-in that starts at start (the interface's
// .../oidc/start address) with client, which must have a cookie jar:
// through the provider's login page, as person, up to the redirect back
// to the interface, which it returns without following.
func Login(client *http.Client, start, person string) (*url.URL, error) {
	c := *client
	var callback *url.URL
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if strings.HasSuffix(req.URL.Path, "/oidc/callback") {
			callback = req.URL
			return http.ErrUseLastResponse
		}
		if len(via) > 10 {
			return errors.New("too many redirects")
		}
		return nil
	}
	res, err := c.Get(start)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if callback != nil {
		return callback, nil // signed in at the provider already
	}
	m := idField.FindSubmatch(body)
	if m == nil {
		return nil, fmt.Errorf("no login form at %s (%d): %.300s", res.Request.URL, res.StatusCode, body)
	}
	login := res.Request.URL.ResolveReference(&url.URL{Path: "/login/username"})
	res, err = c.PostForm(login.String(), url.Values{"id": {string(m[1])}, "username": {person}, "password": {Password}})
	if err != nil {
		return nil, err
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if callback == nil {
		return nil, fmt.Errorf("the provider did not send the browser back (%d): %.300s", res.StatusCode, body)
	}
	return callback, nil
}
