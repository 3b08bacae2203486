package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/ui"
)

// oidcFlags are the flags of signing people in to the web interface with
// an OpenID Connect provider.
type oidcFlags struct {
	issuer       string
	clientID     string
	clientSecret string
	redirectURL  string
	name         string
	scopes       string // more scopes, comma-separated
	roles        roleList
	keySignIn    bool // -ui-key-sign-in
	// allowUnverifiedEmail takes an email without email_verified as
	// verified (-oidc-allow-unverified-email).
	allowUnverifiedEmail bool

	rules []ui.RoleRule // roles parsed, their projects still slugs
}

// roleList is the repeatable -oidc-role flag.
type roleList []string

func (r *roleList) String() string { return strings.Join(*r, " ") }
func (r *roleList) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// register adds the flags to fs; env reads a variable's value or the
// default.
func (o *oidcFlags) register(fs *flag.FlagSet, env func(name, def string) string) {
	fs.StringVar(&o.issuer, "oidc-issuer", env("PROMPTS_OIDC_ISSUER", ""), "sign people in to the web interface with this OpenID Connect provider: its issuer `URL`, such as https://accounts.google.com (http only on localhost) (PROMPTS_OIDC_ISSUER)")
	fs.StringVar(&o.clientID, "oidc-client-id", env("PROMPTS_OIDC_CLIENT_ID", ""), "the client id of the web interface at the -oidc-issuer provider (PROMPTS_OIDC_CLIENT_ID)")
	// The secret takes its variable only after parsing, so that the usage
	// never prints it; the variable keeps it out of ps.
	fs.StringVar(&o.clientSecret, "oidc-client-secret", "", "the client secret at the -oidc-issuer provider; better given by PROMPTS_OIDC_CLIENT_SECRET, which ps does not show")
	fs.StringVar(&o.redirectURL, "oidc-redirect-url", env("PROMPTS_OIDC_REDIRECT_URL", ""), "where the provider sends people back, https://HOST/ui/oidc/callback, as registered at the provider; by default derived from each request (with -trust-proxy from X-Forwarded-Proto and X-Forwarded-Host) (PROMPTS_OIDC_REDIRECT_URL)")
	fs.StringVar(&o.name, "oidc-name", env("PROMPTS_OIDC_NAME", ""), "the provider's `NAME` on the sign-in page, \"Sign in with NAME\"; the issuer's host by default (PROMPTS_OIDC_NAME)")
	fs.StringVar(&o.scopes, "oidc-scopes", env("PROMPTS_OIDC_SCOPES", ""), "more scopes to ask for, comma-separated, besides openid, email and profile, such as groups for Dex (PROMPTS_OIDC_SCOPES)")
	fs.Var(&o.roles, "oidc-role", "a rule `CLAIM=VALUE:ROLE[:SLUG,SLUG…]` giving the people whose ID token's CLAIM is VALUE (or, for a list such as groups, holds it) the ROLE read, write, deploy or admin in the projects of the SLUGs (all when none); CLAIM email_domain is the domain of the verified email. The first rule that matches decides; a person matching none is refused. Repeatable")
	fs.BoolVar(&o.allowUnverifiedEmail, "oidc-allow-unverified-email", env("PROMPTS_OIDC_ALLOW_UNVERIFIED_EMAIL", "") == "true", "take an email whose ID token has no email_verified claim as verified, for a provider that never sends it; by default it must be true. Risky: with a provider where people can set an email they do not own, they sign in as its owner (PROMPTS_OIDC_ALLOW_UNVERIFIED_EMAIL)")
	fs.BoolVar(&o.keySignIn, "ui-key-sign-in", true, "let people sign in to the web interface with an API key; false leaves only -oidc-issuer")
}

// check validates the flags once parsed: given says which were given on
// the command line.
func (o *oidcFlags) check(given map[string]bool, getenv func(string) string, uiOn bool) error {
	if !given["oidc-client-secret"] {
		o.clientSecret = getenv("PROMPTS_OIDC_CLIENT_SECRET")
	}
	if o.issuer == "" {
		for _, f := range []struct {
			name string
			set  bool
		}{{"-oidc-client-id", o.clientID != ""}, {"-oidc-client-secret", o.clientSecret != ""}, {"-oidc-redirect-url", o.redirectURL != ""}, {"-oidc-name", o.name != ""}, {"-oidc-scopes", o.scopes != ""}, {"-oidc-role", len(o.roles) > 0}, {"-oidc-allow-unverified-email", o.allowUnverifiedEmail}} {
			if f.set {
				return fmt.Errorf("%s needs -oidc-issuer", f.name)
			}
		}
		if !o.keySignIn {
			return errors.New("-ui-key-sign-in=false needs -oidc-issuer: without either, nobody could sign in to the web interface")
		}
		return nil
	}
	if !uiOn {
		return errors.New("-oidc-issuer signs people in to the web interface, which -ui=false turns off")
	}
	if u, err := url.Parse(o.issuer); err != nil || u.Host == "" || (u.Scheme != "https" && (u.Scheme != "http" || !loopbackHost(u.Hostname()))) {
		return fmt.Errorf("-oidc-issuer %q must be an https URL, such as https://accounts.google.com (http only on localhost or a loopback address)", o.issuer)
	}
	if o.clientID == "" {
		return errors.New("-oidc-issuer needs -oidc-client-id, the client id registered at the provider")
	}
	if len(o.roles) == 0 {
		return errors.New("-oidc-issuer needs at least one -oidc-role CLAIM=VALUE:ROLE[:SLUG,…]: without one, nobody could sign in with it")
	}
	if o.redirectURL != "" {
		u, err := url.Parse(o.redirectURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != "/ui/oidc/callback" || u.RawQuery != "" {
			return fmt.Errorf("-oidc-redirect-url %q must be the web interface's callback: http(s)://HOST/ui/oidc/callback", o.redirectURL)
		}
	}
	o.rules = nil
	for i, s := range o.roles {
		r, err := ui.ParseRoleRule(s)
		if err != nil {
			return fmt.Errorf("-oidc-role argument %d: %s", i+1, strings.TrimPrefix(err.Error(), "ui: "))
		}
		o.rules = append(o.rules, r)
	}
	return nil
}

// loopbackHost reports whether host is localhost or a loopback address:
// an issuer there may be http, as a provider run for development is.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// options are the web interface's options of the flags, each rule's
// project slugs resolved to the projects' ids now: an unknown slug stops
// the start, naming it.
func (o *oidcFlags) options(ctx context.Context, store prompts.Store, trustProxy bool, logger *slog.Logger) ([]ui.Option, error) {
	var opts []ui.Option
	if !o.keySignIn {
		opts = append(opts, ui.WithKeySignIn(false))
	}
	if o.issuer == "" {
		return opts, nil
	}
	var bySlug map[string]string
	rules := make([]ui.RoleRule, len(o.rules))
	for i, r := range o.rules {
		if r.ProjectIDs != nil && bySlug == nil {
			all, err := allProjects(ctx, store)
			if err != nil {
				return nil, err
			}
			bySlug = make(map[string]string, len(all))
			for _, p := range all {
				bySlug[p.Slug] = p.ID
			}
		}
		slugs := r.ProjectIDs
		if slugs != nil {
			r.ProjectIDs = make([]string, 0, len(slugs))
		}
		for _, slug := range slugs {
			id, ok := bySlug[slug]
			if !ok {
				return nil, fmt.Errorf("-oidc-role argument %d: no project has the slug %q", i+1, slug)
			}
			r.ProjectIDs = append(r.ProjectIDs, id)
		}
		rules[i] = r
		projects := "every project"
		if slugs != nil {
			projects = strings.Join(slugs, ",")
		}
		logger.Info("OpenID Connect rule", "claim", r.Claim, "value", r.Value, "role", r.Role.String(), "projects", projects)
	}
	opts = append(opts, ui.WithOIDC(ui.OIDCConfig{
		Issuer:               o.issuer,
		ClientID:             o.clientID,
		ClientSecret:         o.clientSecret,
		RedirectURL:          o.redirectURL,
		Name:                 o.name,
		Scopes:               o.scopeList(),
		TrustForwardedHost:   trustProxy,
		Rules:                rules,
		TrustUnverifiedEmail: o.allowUnverifiedEmail,
	}))
	return opts, nil
}

// scopeList is -oidc-scopes as a list.
func (o *oidcFlags) scopeList() []string {
	var list []string
	for _, sc := range strings.Split(o.scopes, ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			list = append(list, sc)
		}
	}
	return list
}

// howToSignIn says, where the server prints the web interface's address,
// how people sign in to it.
func (o *oidcFlags) howToSignIn() string {
	switch {
	case o.issuer == "":
		return "sign in with the API key"
	case !o.keySignIn:
		return "sign in with the identity provider"
	}
	return "sign in with the identity provider, or with the API key"
}
