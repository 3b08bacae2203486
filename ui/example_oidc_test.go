package ui_test

import (
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/ui"
)

// ExampleWithOIDC signs people in with Google: everyone of example.com
// may write, one person is admin, and API keys no longer sign in to the
// interface. New does no I/O: the provider is asked at the first
// sign-in.
func ExampleWithOIDC() {
	store := memstore.New()
	keys := httpapi.NewKeys()
	web, err := ui.New(store, keys,
		ui.WithOIDC(ui.OIDCConfig{
			Issuer:       "https://accounts.google.com",
			Name:         "Google",
			ClientID:     "1234-abc.apps.googleusercontent.com",
			ClientSecret: os.Getenv("OIDC_CLIENT_SECRET"),
			RedirectURL:  "https://prompts.example.com/ui/oidc/callback",
			Rules: []ui.RoleRule{
				{Claim: "email", Value: "lead@example.com", Role: httpapi.RoleAdmin},
				{Claim: "email_domain", Value: "example.com", Role: httpapi.RoleWrite},
			},
		}),
		ui.WithKeySignIn(false),
	)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(web.Prefix(), web)
	fmt.Println("mounted at", web.Prefix())
	// Output: mounted at /ui/
}

// ExampleParseRoleRule reads rules as the standalone server's -oidc-role
// takes them (with project ids where the server takes slugs).
func ExampleParseRoleRule() {
	for _, s := range []string{
		"groups=prompt-admins:admin",
		"email_domain=example.com:read:01J9ZQ0000000000000000000A",
		"groups=my-org:prompt-writers:write",
	} {
		r, err := ui.ParseRoleRule(s)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s is %q: %s, projects %v\n", r.Claim, r.Value, r.Role, r.ProjectIDs)
	}
	// Output:
	// groups is "prompt-admins": admin, projects []
	// email_domain is "example.com": read, projects [01J9ZQ0000000000000000000A]
	// groups is "my-org:prompt-writers": write, projects []
}
