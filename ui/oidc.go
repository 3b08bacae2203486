package ui

import (
	"context"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// OIDCConfig is how the handler signs people in with an OpenID Connect
// provider (see WithOIDC and the package's documentation).
type OIDCConfig struct {
	// Issuer is the provider's issuer URL, exactly as its discovery
	// document and its ID tokens give it, such as
	// "https://accounts.google.com". Required.
	Issuer string
	// ClientID and ClientSecret are the handler's credentials at the
	// provider. ClientID is required; ClientSecret may be empty for a
	// public client (PKCE protects the code either way).
	ClientID     string
	ClientSecret string
	// RedirectURL is where the provider sends the browser back: the
	// handler's prefix followed by "oidc/callback", such as
	// "https://prompts.example.com/ui/oidc/callback". It must be
	// registered at the provider. When empty, it is derived from each
	// request: https when the request came over TLS or its cookies are
	// Secure (WithSecureCookies, WithSecureCookiesIf), the request's Host
	// (or X-Forwarded-Host, with TrustForwardedHost), then the prefix.
	RedirectURL string
	// TrustForwardedHost derives the redirect URL's host from the last
	// X-Forwarded-Host of a request, for a handler behind a proxy that
	// sets it. Only with an empty RedirectURL.
	TrustForwardedHost bool
	// Name names the provider on the sign-in page: "Sign in with Name".
	// The default is the issuer's host.
	Name string
	// Scopes are asked for besides "openid", "email" and "profile", such
	// as "groups" for a provider that gives the groups claim only then.
	Scopes []string
	// Rules give people a role and projects from the claims of their ID
	// token; the first rule that matches decides. A person no rule
	// matches is refused. At least one is required.
	Rules []RoleRule
	// TrustUnverifiedEmail takes an email whose ID token (or userinfo)
	// has no email_verified claim as verified. By default the claim must
	// be true, since some providers (those built on zitadel, for one)
	// leave it out when the email is not verified. Only for a provider
	// that never sends the claim and verifies every email itself: with
	// any other, whoever can set an unverified email there (such as
	// someone@example.com) signs in as that person and matches the
	// rules of that email and its email_domain. An email_verified of
	// false is refused either way.
	TrustUnverifiedEmail bool
	// HTTPClient talks to the provider: discovery, the token exchange,
	// its keys and its userinfo endpoint. The default has a 10 s timeout;
	// a client without a timeout is given that one.
	HTTPClient *http.Client
}

// RoleRule gives the people whose claim Claim is Value (or, for a claim
// that is an array of strings, holds Value) the role Role in the
// projects ProjectIDs, or in every project when ProjectIDs is nil. Claim
// "email_domain" is the domain of the person's verified email, in lower
// case: {Claim: "email_domain", Value: "example.com"} matches everyone of
// example.com. Claims that are neither strings nor arrays of strings
// match nothing.
type RoleRule struct {
	Claim      string
	Value      string
	Role       httpapi.Role
	ProjectIDs []string // nil: every project
}

// String gives the rule as CLAIM=VALUE:ROLE[:PROJECT,…].
func (r RoleRule) String() string {
	s := r.Claim + "=" + r.Value + ":" + r.Role.String()
	if r.ProjectIDs != nil {
		s += ":" + strings.Join(r.ProjectIDs, ",")
	}
	return s
}

// ParseRoleRule reads a rule written CLAIM=VALUE:ROLE[:PROJECT,…], such
// as "groups=prompt-admins:admin" or
// "email_domain=example.com:write:01J…,01J…", the projects given by id.
// VALUE may hold ':' only if it is followed by a role and, optionally,
// projects: the role is the last field but one or the last.
func ParseRoleRule(s string) (RoleRule, error) {
	claim, rest, ok := strings.Cut(s, "=")
	if !ok || claim == "" {
		return RoleRule{}, fmt.Errorf("ui: the rule %q: want CLAIM=VALUE:ROLE[:PROJECT,…]", s)
	}
	fields := strings.Split(rest, ":")
	if len(fields) < 2 {
		return RoleRule{}, fmt.Errorf("ui: the rule %q: want CLAIM=VALUE:ROLE[:PROJECT,…], a role after the value", s)
	}
	// The role is the last field, or the last but one when the last is
	// a list of projects (which is never a role's name).
	ri := len(fields) - 1
	var projects []string
	if _, err := httpapi.ParseRole(fields[ri]); err != nil && len(fields) >= 3 {
		ri--
		for _, p := range strings.Split(fields[len(fields)-1], ",") {
			if p = strings.TrimSpace(p); p == "" {
				return RoleRule{}, fmt.Errorf("ui: the rule %q: an empty project in the list", s)
			}
			projects = append(projects, p)
		}
	}
	role, err := httpapi.ParseRole(fields[ri])
	if err != nil {
		return RoleRule{}, fmt.Errorf("ui: the rule %q: %q is not a role: want read, write, deploy or admin", s, fields[ri])
	}
	r := RoleRule{Claim: claim, Value: strings.Join(fields[:ri], ":"), Role: role, ProjectIDs: projects}
	return r, r.validate()
}

func (r RoleRule) validate() error {
	switch {
	case r.Claim == "":
		return fmt.Errorf("ui: the rule %q: the claim is empty", r)
	case r.Value == "":
		return fmt.Errorf("ui: the rule %q: the value is empty", r)
	case r.Role < httpapi.RoleRead || r.Role > httpapi.RoleAdmin:
		return fmt.Errorf("ui: the rule for %s=%s: the role must be read, write, deploy or admin", r.Claim, r.Value)
	case r.ProjectIDs != nil && len(r.ProjectIDs) == 0:
		return fmt.Errorf("ui: the rule %q: an empty list of projects (nil for every project)", r)
	}
	return nil
}

// WithOIDC adds "Sign in with <provider>" to the sign-in page: people
// sign in with an OpenID Connect provider, with the authorization code
// flow and PKCE, and get the role and projects of the first of
// cfg.Rules that their claims match. The handler fetches the provider's
// discovery document when the first person signs in, not in New; a
// provider that does not answer then is asked again at the next
// sign-in. It returns an error for a config without issuer, client id
// or rules, or with an invalid rule or redirect URL.
func WithOIDC(cfg OIDCConfig) Option {
	return func(h *Handler) error {
		u, err := url.Parse(cfg.Issuer)
		if cfg.Issuer == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("ui: the OpenID Connect issuer %q must be an http or https URL", cfg.Issuer)
		}
		if cfg.ClientID == "" {
			return errors.New("ui: the OpenID Connect client id must not be empty")
		}
		if len(cfg.Rules) == 0 {
			return errors.New("ui: OpenID Connect needs at least one rule giving people a role; without one nobody could sign in")
		}
		for _, r := range cfg.Rules {
			if err := r.validate(); err != nil {
				return err
			}
		}
		if cfg.RedirectURL != "" {
			ru, err := url.Parse(cfg.RedirectURL)
			if err != nil || (ru.Scheme != "https" && ru.Scheme != "http") || ru.Host == "" {
				return fmt.Errorf("ui: the OpenID Connect redirect URL %q must be an http or https URL", cfg.RedirectURL)
			}
		}
		if cfg.Name == "" {
			cfg.Name = u.Host
		}
		if cfg.HTTPClient == nil {
			cfg.HTTPClient = &http.Client{Timeout: oidcTimeout}
		} else if cfg.HTTPClient.Timeout <= 0 {
			// The provider's keys are fetched by a goroutine of go-oidc
			// that only the client's timeout ends.
			c := *cfg.HTTPClient
			c.Timeout = oidcTimeout
			cfg.HTTPClient = &c
		}
		cfg.Rules = slices.Clone(cfg.Rules)
		cfg.Scopes = slices.Clone(cfg.Scopes)
		h.oidc = &oidcState{cfg: cfg}
		return nil
	}
}

// WithKeySignIn turns sign-in with an API key on (the default) or off.
// Off, the sign-in page offers only the OpenID Connect provider of
// WithOIDC (New refuses it off without one), and a key posted to the
// sign-in form is refused (403). Sessions of keys already signed in
// go on until they end.
func WithKeySignIn(on bool) Option {
	return func(h *Handler) error {
		h.noKeys = !on
		return nil
	}
}

// oidcTimeout bounds each call to the provider: discovery, the token
// exchange, the userinfo endpoint.
const oidcTimeout = 10 * time.Second

// flowTTL is how long a person has at the provider to sign in.
const flowTTL = 10 * time.Minute

// flowCookie holds the state, nonce and PKCE verifier of a sign-in under
// way, sealed; it is SameSite=Lax, as the provider's redirect back is a
// navigation from another site.
const flowCookie = "prompts_oidc"

// flowInfo and personInfo are the HKDF labels of the keys that seal the
// flow cookie and a person's session.
const (
	flowInfo   = "github.com/promptkit/prompts/ui OpenID Connect flow, AES-256-GCM"
	personInfo = "github.com/promptkit/prompts/ui session person, AES-256-GCM"
)

// oidcState is the handler's OpenID Connect sign-in: its config, and the
// provider once discovered.
type oidcState struct {
	cfg OIDCConfig

	mu       sync.Mutex // held during discovery: one at a time
	provider *oidc.Provider
}

// flow is a sign-in under way, kept sealed in the browser's flow cookie.
type flow struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Next     string    `json:"x"`
	Expires  time.Time `json:"e"`
}

// discover returns the provider, fetching its discovery document the
// first time (within oidcTimeout); a failure is not kept.
func (o *oidcState) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	ctx, cancel := context.WithTimeout(ctx, oidcTimeout)
	defer cancel()
	// The provider's key set keeps this client, not the context.
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, o.cfg.HTTPClient), o.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	o.provider = p
	return p, nil
}

// aead returns the AES-256-GCM that seals what info labels under a key
// derived from the handler's secret.
func (h *Handler) aead(info string) (cipher.AEAD, error) {
	return sealerInfo(h.secret, info)
}

// sealerInfo is sealer with another HKDF label.
func sealerInfo(secret []byte, info string) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, secret, nil, info, 32)
	if err != nil {
		return nil, err
	}
	return newGCM(k)
}

// redirectURL is where the provider sends the browser back for r.
func (h *Handler) redirectURL(r *http.Request) string {
	if h.oidc.cfg.RedirectURL != "" {
		return h.oidc.cfg.RedirectURL
	}
	scheme := "http"
	if r.TLS != nil || h.secure || (h.secureIf != nil && h.secureIf(r)) {
		scheme = "https"
	}
	host := r.Host
	if h.oidc.cfg.TrustForwardedHost {
		if v := r.Header["X-Forwarded-Host"]; len(v) > 0 {
			last := v[len(v)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if last = strings.TrimSpace(last); last != "" {
				host = last
			}
		}
	}
	return (&url.URL{Scheme: scheme, Host: host, Path: h.prefix + "oidc/callback"}).String()
}

// oauth2Config is the OAuth 2.0 side of the flow for r.
func (h *Handler) oauth2Config(p *oidc.Provider, r *http.Request) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     h.oidc.cfg.ClientID,
		ClientSecret: h.oidc.cfg.ClientSecret,
		Endpoint:     p.Endpoint(),
		RedirectURL:  h.redirectURL(r),
		Scopes:       append([]string{oidc.ScopeOpenID, "email", "profile"}, h.oidc.cfg.Scopes...),
	}
}

// oidcStart is GET {prefix}oidc/start: a new flow, its state, nonce and
// PKCE verifier sealed in the flow cookie, and the browser sent to the
// provider.
func (h *Handler) oidcStart(w http.ResponseWriter, r *http.Request) {
	c := &call{h: h, w: w, r: r}
	if !c.fieldsOK() {
		return
	}
	p, err := h.oidc.discover(r.Context())
	if err != nil {
		h.providerDown(c, "discovery", err)
		return
	}
	f := flow{
		State:    randomToken(),
		Nonce:    randomToken(),
		Verifier: oauth2.GenerateVerifier(),
		Next:     h.safeNext(r.URL.Query().Get("next")),
		Expires:  h.now().Add(flowTTL),
	}
	value, err := h.sealFlow(f)
	if err != nil {
		c.storeError(prompts.Internal(err))
		return
	}
	ck := h.cookie(r, flowCookie, value, int(flowTTL/time.Second))
	ck.SameSite = http.SameSiteLaxMode
	http.SetCookie(w, ck)
	to := h.oauth2Config(p, r).AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier))
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func (h *Handler) sealFlow(f flow) (string, error) {
	a, err := h.aead(flowInfo)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(f)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(a.Seal(nil, nil, b, nil)), nil
}

// openFlow returns the flow of the cookie's value, and false when it was
// not sealed by this handler (or one with its secret).
func (h *Handler) openFlow(v string) (flow, bool) {
	sealed, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return flow{}, false
	}
	a, err := h.aead(flowInfo)
	if err != nil {
		return flow{}, false
	}
	b, err := a.Open(nil, nil, sealed, nil)
	if err != nil {
		return flow{}, false
	}
	var f flow
	if json.Unmarshal(b, &f) != nil || f.State == "" || f.Nonce == "" || f.Verifier == "" {
		return flow{}, false
	}
	return f, true
}

// oidcRefused answers a sign-in that did not go through: 403 and a page
// that says why, with a link to try again. Nobody is signed in.
func (h *Handler) oidcRefused(c *call, status int, title, msg string) {
	http.SetCookie(c.w, h.cookie(c.r, flowCookie, "", -1))
	c.fail(status, errorData{Title: title, Message: msg, Back: h.prefix, BackTo: "Back to sign-in"})
}

// providerDown answers a provider that did not answer: 503, and the next
// sign-in asks it again.
func (h *Handler) providerDown(c *call, what string, err error) {
	h.log.WarnContext(c.r.Context(), "ui: the OpenID Connect provider did not answer", "step", what, "issuer", h.oidc.cfg.Issuer, "err", err)
	c.w.Header().Set("Retry-After", "10")
	c.fail(http.StatusServiceUnavailable, errorData{
		Title:   "Sign-in unavailable",
		Message: "The identity provider " + h.oidc.cfg.Name + " could not be reached just now. Try again in a moment.",
		Back:    h.prefix, BackTo: "Back to sign-in",
	})
}

// oidcCallback is GET {prefix}oidc/callback, where the provider sends
// the browser back. The state must be the flow cookie's, the flow
// unexpired and not used before; the code is exchanged with the PKCE
// verifier; the ID token must be signed by the provider, for this
// client, unexpired, and carry the flow's nonce; the person's verified
// email and a rule give the session.
func (h *Handler) oidcCallback(w http.ResponseWriter, r *http.Request) {
	c := &call{h: h, w: w, r: r}
	if !c.fieldsOK() {
		return
	}
	q := r.URL.Query()
	ck, err := r.Cookie(flowCookie)
	if err != nil {
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "This sign-in was not started in this browser, or took too long. Nobody was signed in; sign in again.")
		return
	}
	f, ok := h.openFlow(ck.Value)
	now := h.now()
	switch {
	case !ok:
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "This sign-in was not started in this browser. Nobody was signed in; sign in again.")
		return
	case !now.Before(f.Expires):
		h.oidcRefused(c, http.StatusForbidden, "Sign-in expired", "This sign-in took longer than 10 minutes, so it was refused. Nobody was signed in; sign in again.")
		return
	case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.State)) != 1:
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "The answer of the identity provider does not belong to the sign-in started in this browser (its state differs). Nobody was signed in; sign in again.")
		return
	}
	if e := q.Get("error"); e != "" {
		msg := "The identity provider refused the sign-in (" + e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", msg+"). Nobody was signed in.")
		return
	}
	code := q.Get("code")
	if code == "" {
		h.oidcRefused(c, http.StatusBadRequest, "Sign-in refused", "The identity provider's answer has no code. Nobody was signed in; sign in again.")
		return
	}
	// Each flow works once: its cookie and code replayed sign nobody in.
	if !h.used.use("oidc:"+f.State, f.Expires, now) {
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "This sign-in was used already. Nobody was signed in; sign in again.")
		return
	}
	p, err := h.oidc.discover(r.Context())
	if err != nil {
		h.providerDown(c, "discovery", err)
		return
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(r.Context(), h.oidc.cfg.HTTPClient), oidcTimeout)
	defer cancel()
	tok, err := h.oauth2Config(p, r).Exchange(ctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) {
			h.providerDown(c, "token exchange", err)
			return
		}
		h.log.InfoContext(r.Context(), "ui: the OpenID Connect provider refused the code", "err", err)
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "The identity provider refused to confirm this sign-in (was it used already, or too old?). Nobody was signed in; sign in again.")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "The identity provider sent no ID token. Nobody was signed in.")
		return
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: h.oidc.cfg.ClientID, Now: h.now}).Verify(ctx, raw)
	if err != nil {
		h.log.InfoContext(r.Context(), "ui: an ID token did not verify", "err", err)
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "The identity provider's ID token did not verify (its signature, issuer, audience or expiry is wrong). Nobody was signed in.")
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "The ID token does not belong to the sign-in started in this browser (its nonce differs). Nobody was signed in; sign in again.")
		return
	}
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "The ID token's claims could not be read. Nobody was signed in.")
		return
	}
	if _, ok := claims["email"]; !ok && p.UserInfoEndpoint() != "" {
		// Some providers give the email only at their userinfo endpoint.
		info, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			h.providerDown(c, "userinfo", err)
			return
		}
		if info.Subject != idt.Subject {
			h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "The identity provider's userinfo is of another person than its ID token. Nobody was signed in.")
			return
		}
		more := map[string]any{}
		if err := info.Claims(&more); err == nil {
			for k, v := range more {
				if _, ok := claims[k]; !ok {
					claims[k] = v
				}
			}
		}
	}
	email, problem := verifiedEmail(claims, h.oidc.cfg.TrustUnverifiedEmail)
	if problem != "" {
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", problem+" Nobody was signed in.")
		return
	}
	if err := (prompts.Change{Actor: email}).Validate(); err != nil {
		h.oidcRefused(c, http.StatusForbidden, "Sign-in refused", "The email address given by the identity provider cannot name who makes changes here (at most "+fmt.Sprint(prompts.MaxName)+" characters). Nobody was signed in.")
		return
	}
	claims["email_domain"] = strings.ToLower(email[strings.LastIndexByte(email, '@')+1:])
	rule, ok := matchRule(h.oidc.cfg.Rules, claims)
	if !ok {
		h.log.InfoContext(r.Context(), "ui: a person matched no rule", "email", email)
		http.SetCookie(w, h.cookie(r, flowCookie, "", -1))
		c.fail(http.StatusForbidden, errorData{
			Title:   "No access",
			Message: "You signed in at " + h.oidc.cfg.Name + " as " + email + ", but no rule of this server gives that account access. Ask whoever runs it to give you a role. Nobody was signed in here.",
			Back:    h.prefix, BackTo: "Back to sign-in",
		})
		return
	}
	a := httpapi.Access{Name: email, Role: rule.Role, AllProjects: rule.ProjectIDs == nil, ProjectIDs: slices.Clone(rule.ProjectIDs)}
	value, err := h.startSession(r, "person:"+email, func(secret []byte) (Session, error) {
		sealed, err := sealPerson(secret, a)
		return Session{SealedPerson: sealed}, err
	})
	if err != nil {
		c.storeError(err)
		return
	}
	http.SetCookie(w, h.cookie(r, sessionCookie, value, 0))
	http.SetCookie(w, h.cookie(r, flowCookie, "", -1))
	// The session cookie is SameSite=Strict, and a redirect here would
	// still be part of the navigation that came from the provider's site,
	// without it: a page of this site moves on instead.
	c.render(http.StatusOK, "signedin", view{Title: "Signed in", Prefix: h.prefix, CSS: h.static.url(h.prefix, "ui.css"), JS: h.static.url(h.prefix, "ui.js"), Refresh: f.Next, Data: signedInData{Next: f.Next, Email: email}})
}

type signedInData struct {
	Next  string
	Email string
}

// verifiedEmail returns the email of the claims, or why it cannot be
// used: there must be one, and email_verified must be true (or, with
// trustMissing, may be absent).
func verifiedEmail(claims map[string]any, trustMissing bool) (string, string) {
	email, _ := claims["email"].(string)
	if email == "" || !strings.Contains(email, "@") {
		return "", "The identity provider gave no email address (is the \"email\" scope allowed for this client?)."
	}
	v, ok := claims["email_verified"]
	if !ok {
		if trustMissing {
			return email, ""
		}
		return "", "The identity provider does not say that the email address " + email + " is verified (it gave no email_verified claim)."
	}
	if b, isBool := v.(bool); !(isBool && b) && v != "true" {
		return "", "The identity provider says that the email address " + email + " is not verified."
	}
	return email, ""
}

// matchRule returns the first rule that the claims match.
func matchRule(rules []RoleRule, claims map[string]any) (RoleRule, bool) {
	for _, r := range rules {
		switch v := claims[r.Claim].(type) {
		case string:
			if v == r.Value {
				return r, true
			}
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok && s == r.Value {
					return r, true
				}
			}
		}
	}
	return RoleRule{}, false
}

// sealPerson seals a person's access under the session's secret, so that
// a session store's entry can be neither read nor made without the
// browser's cookie.
func sealPerson(secret []byte, a httpapi.Access) ([]byte, error) {
	aead, err := sealerInfo(secret, personInfo)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	return aead.Seal(nil, nil, b, nil), nil
}

// openPerson opens what sealPerson sealed.
func openPerson(secret, sealed []byte) (httpapi.Access, bool) {
	aead, err := sealerInfo(secret, personInfo)
	if err != nil {
		return httpapi.Access{}, false
	}
	b, err := aead.Open(nil, nil, sealed, nil)
	if err != nil {
		return httpapi.Access{}, false
	}
	var a httpapi.Access
	if json.Unmarshal(b, &a) != nil || a.Name == "" {
		return httpapi.Access{}, false
	}
	return a, true
}
