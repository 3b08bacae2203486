// Command testop is an OpenID Connect provider for the tests of the web
// interface's sign-in: zitadel/oidc's example provider (its in-memory
// storage and login page), with people and clients of its own. It is a
// module of its own, so that the provider's dependencies (and the Go
// version they need) stay out of the main module.
//
// It listens on 127.0.0.1 at a free port, prints "issuer URL" on its
// first line of stdout, and serves until its stdin closes (so that it
// ends with the test that started it).
//
// People (password "secret-password"):
//
//	alice@example.com  groups prompt-admins       email verified
//	dave@example.com   groups prompt-writers      email verified
//	bob@elsewhere.test no groups                  email verified
//	carol@example.com  groups prompt-admins       email NOT verified
//	erin@example.com   groups prompt-admins       email NOT verified, and no email_verified claim
//	                                              (as zitadel's own storage does when false)
//
// Clients (any redirect URI on 127.0.0.1 or localhost):
//
//	prompts           secret prompts-secret, the claims in the ID token
//	prompts-userinfo  secret prompts-secret, the claims only at the userinfo endpoint
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// Password is every person's password.
const Password = "secret-password"

type person struct {
	storage.User
	groups []string
}

var people = []person{
	{User: storage.User{ID: "alice", Username: "alice@example.com", Email: "alice@example.com", EmailVerified: true, FirstName: "Alice"}, groups: []string{"prompt-admins"}},
	{User: storage.User{ID: "dave", Username: "dave@example.com", Email: "dave@example.com", EmailVerified: true, FirstName: "Dave"}, groups: []string{"prompt-writers"}},
	{User: storage.User{ID: "bob", Username: "bob@elsewhere.test", Email: "bob@elsewhere.test", EmailVerified: true, FirstName: "Bob"}},
	{User: storage.User{ID: "carol", Username: "carol@example.com", Email: "carol@example.com", EmailVerified: false, FirstName: "Carol"}, groups: []string{"prompt-admins"}},
	{User: storage.User{ID: "erin", Username: "erin@example.com", Email: "erin@example.com", EmailVerified: false, FirstName: "Erin"}, groups: []string{"prompt-admins"}},
}

type users struct{}

func (users) GetUserByID(id string) *storage.User {
	for _, p := range people {
		if p.ID == id {
			u := p.User
			u.Password, u.PreferredLanguage = Password, language.English
			return &u
		}
	}
	return nil
}

func (u users) GetUserByUsername(name string) *storage.User {
	for _, p := range people {
		if p.Username == name {
			return u.GetUserByID(p.ID)
		}
	}
	return nil
}

func (users) ExampleClientID() string { return "service" }

func groupsOf(id string) []string {
	for _, p := range people {
		if p.ID == id {
			return p.groups
		}
	}
	return nil
}

// store is the example's storage with our clients, and the groups claim.
type store struct {
	*storage.Storage
}

func (s store) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	switch id {
	case "prompts":
		return client{id: id, inToken: true}, nil
	case "prompts-userinfo":
		return client{id: id}, nil
	}
	return nil, fmt.Errorf("no client %q", id)
}

func (s store) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	if _, err := s.GetClientByClientID(ctx, id); err != nil {
		return err
	}
	if secret != "prompts-secret" {
		return fmt.Errorf("wrong secret for %q", id)
	}
	return nil
}

func (s store) SetUserinfoFromScopes(ctx context.Context, info *oidc.UserInfo, userID, clientID string, scopes []string) error {
	if err := s.Storage.SetUserinfoFromScopes(ctx, info, userID, clientID, scopes); err != nil {
		return err
	}
	return s.groups(ctx, info, userID, clientID, scopes)
}

func (s store) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	return s.groups(ctx, info, req.GetSubject(), req.GetClientID(), scopes)
}

func (s store) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, info, tokenID, subject, origin); err != nil {
		return err
	}
	if g := groupsOf(info.Subject); g != nil {
		info.AppendClaims("groups", g)
	}
	unverified(info)
	return nil
}

// unverified says email_verified: false of the people whose email is not
// verified, but Erin's: the example's storage leaves the claim out.
func unverified(info *oidc.UserInfo) {
	if info.Email != "" && info.Email != "erin@example.com" && !bool(info.EmailVerified) {
		info.AppendClaims("email_verified", false)
	}
}

// groups sets the ID token's groups claim, with the userinfo claims.
func (s store) groups(_ context.Context, info *oidc.UserInfo, userID, clientID string, scopes []string) error {
	if g := groupsOf(userID); g != nil && clientID == "prompts" && slices.Contains(scopes, "email") {
		info.AppendClaims("groups", g)
	}
	unverified(info)
	return nil
}

// client is a confidential web client that may redirect anywhere on the
// loopback interface.
type client struct {
	id      string
	inToken bool
}

func (c client) GetID() string          { return c.id }
func (c client) RedirectURIs() []string { return nil }
func (c client) RedirectURIGlobs() []string {
	return []string{"http://127.0.0.1:*/**", "http://localhost:*/**"}
}
func (c client) PostLogoutRedirectURIs() []string     { return nil }
func (c client) PostLogoutRedirectURIGlobs() []string { return nil }
func (c client) ApplicationType() op.ApplicationType  { return op.ApplicationTypeWeb }
func (c client) AuthMethod() oidc.AuthMethod          { return oidc.AuthMethodBasic }
func (c client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c client) GrantTypes() []oidc.GrantType        { return []oidc.GrantType{oidc.GrantTypeCode} }
func (c client) LoginURL(id string) string           { return "/login/username?authRequestID=" + id }
func (c client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }
func (c client) IDTokenLifetime() time.Duration      { return time.Hour }
func (c client) DevMode() bool                       { return true }
func (c client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c client) IsScopeAllowed(scope string) bool     { return scope == "groups" }
func (c client) IDTokenUserinfoClaimsAssertion() bool { return c.inToken }
func (c client) ClockSkew() time.Duration             { return 0 }

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	issuer := "http://" + ln.Addr().String() + "/"
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	router := exampleop.SetupServer(issuer, store{storage.NewStorage(users{})}, logger, false)
	srv := &http.Server{Handler: router, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	fmt.Println(issuer)
	io.Copy(io.Discard, os.Stdin) // until the test that started it ends
	srv.Close()
}
