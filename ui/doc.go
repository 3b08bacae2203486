// Package ui is a web interface to a prompts.Store, for the people who
// write, compare, promote and roll back prompts: an http.Handler that an
// application mounts at a prefix of its choice, behind the same
// Authenticator as its HTTP interface.
//
//	h, err := ui.New(store, keys, ui.WithPrefix("/admin/prompts/"))
//	if err != nil { ... }
//	mux.Handle("/admin/prompts/", h)
//
// Pages are rendered on the server with html/template. New checks the
// templates; the first page served parses them again and keeps them
// (about 225 KB of parse trees, which every garbage collection of the
// process marks), so an application whose interface nobody opens does
// not hold them. The styles and the little script they use are embedded
// in the binary and served under the prefix, so the interface loads
// nothing from another origin, and every page and every action works
// with scripts turned off (the script only adds a live list of variables
// while typing a version, and a few keyboard shortcuts: "/" to search,
// Ctrl+Enter to submit a form).
//
// # Signing in
//
// A person signs in with an API key (or with an identity provider, see
// below). The key becomes a session: the
// browser holds a random 256-bit secret in a cookie that is HttpOnly,
// SameSite=Strict, Secure over TLS (or always, with WithSecureCookies),
// and scoped to the prefix; the server keeps the session (the key,
// sealed; a CSRF token; when it began and was last used) in a
// SessionStore, under a SHA-256 hash of the cookie. The key is sealed
// with AES-256-GCM under a key derived from the cookie's secret
// (HKDF-SHA256), and the secret is kept only in the browser: whoever
// reads the SessionStore (a store the replicas share, its backups) can
// neither recover an API key from it nor use a session, without the
// browser's cookie, and an entry put under another cookie's id does not
// open.
//
// At every request of a session the server opens the key and asks the
// Authenticator about it again, as the HTTP interface does at every
// request, and its answer bounds that request: a key removed from the
// Authenticator ends its open sessions at their next request (a page
// asks to sign in again; a POST is 401 and changes nothing), and a key
// whose role or projects changed may see and do at once what it now
// may, no more. While the Authenticator does not answer, pages are 503
// and nothing changes; sessions live on, and signing out still works.
// Besides the Authenticator's call, this costs a request a few
// microseconds. A session also ends at sign-out, after 8 hours without
// a request (WithIdleTimeout), and after 24 hours in any case
// (WithMaxAge).
//
// The key's current role and projects bound everything the interface
// shows and does, exactly as over the HTTP interface: a read key sees
// no Promote, and a forged request is refused by the server all the
// same (403); a project the key may not see is not listed, and its
// pages are 404.
// Every form that changes something carries the session's CSRF token; a
// POST without a valid one is 403 and changes nothing. Requests that a
// browser marks as cross-origin are refused too
// (http.CrossOriginProtection).
//
// The sign-in form is guarded before there is a session: its cookie
// holds a random nonce and when the form expires (after an hour), and
// its token is that value signed with HMAC-SHA256, under a key derived
// (HKDF-SHA256) from the handler's secret, compared in constant time. A
// site that can set cookies for the interface's host (a sibling
// subdomain, or anyone on a plain-HTTP path) cannot make a token that
// goes with a cookie it plants, so it cannot sign a browser in with a
// key of its own: that is 403, with the form again. The secret is
// random, made by New, unless given with WithSecret. Each form works
// once: posted again (its cookie and token replayed), it is 403 and
// signs nobody in; every answer to a sign-in carries a new form. The
// handler remembers the forms used until they expire, up to 100,000 of
// them (about 10 MB), the oldest forgotten first past that.
//
// Failed sign-ins are limited per client address and key prefix
// (WithSignInLimit: 10 a minute by default, counted by the address and
// the first 8 bytes of the key tried): past the limit, keys of that
// prefix from that address are 429 for the rest of the minute, while
// other keys are served, so that one person guessing keys behind a
// reverse proxy (where every client shares the proxy's address) does
// not lock out everyone behind it. The limit slows down guessing by
// hand; what makes a key unguessable is its length.
//
// Sessions are bounded: one API key holds at most 10 sessions, and the
// handler at most 10,000 in all (WithSessionLimits); a sign-in past
// either limit ends the session used least recently (of that key, or of
// all), deleting it from the SessionStore, and its browser is asked to
// sign in again. So sign-ins without end, with one key or a few, cost a
// bounded amount of memory (some hundreds of bytes a session in
// MemorySessions, and as much again in the handler's index). The
// handler counts the sessions it made or served; replicas that share a
// SessionStore each count their own.
//
// # Signing in with an identity provider
//
// WithOIDC signs people in with an OpenID Connect provider as well (or
// only, with WithKeySignIn(false)): the sign-in page offers "Sign in
// with <provider>", a link to {prefix}oidc/start, which sends the
// browser to the provider with the authorization code flow, PKCE (S256),
// a random state and a random nonce. The state, the nonce, the PKCE
// verifier, where to go after, and when the flow expires (10 minutes)
// are sealed with AES-256-GCM under a key derived from the handler's
// secret, in a cookie that is HttpOnly, SameSite=Lax (the provider's
// redirect back is a navigation from its site), Secure as the session's,
// and scoped to the prefix. The provider sends the browser back to
// {prefix}oidc/callback (OIDCConfig.RedirectURL, or derived from the
// request), where the state must be the cookie's, the flow unexpired
// and not used before (a replayed redirect with its cookie signs nobody
// in); the code is exchanged with the verifier, and the ID token's
// signature, issuer, audience, expiry and nonce are checked, with
// github.com/coreos/go-oidc/v3 and golang.org/x/oauth2.
//
// The provider's discovery document is fetched at the first sign-in,
// not in New, within 10 s; a provider that does not answer gives a
// page saying so (503), and is asked again at the next sign-in. Its
// keys are fetched when a token names one not seen yet (by a goroutine
// of go-oidc that ends with OIDCConfig.HTTPClient's timeout). Nothing
// of it runs without a sign-in.
//
// The person's email comes from the ID token or, when it has none, the
// provider's userinfo endpoint (for the same subject). Its
// email_verified claim must be true; a provider that never sends it is
// trusted only with OIDCConfig.TrustUnverifiedEmail. The rules (OIDCConfig.Rules,
// RoleRule) are tried in order and the first whose claim matches gives
// the role and projects; "email_domain" is the domain of the email. A
// person no rule matches is refused with a page that says so (403) and
// gets no session. The session is as a key's (the same cookie, limits,
// idle timeout and maximum age) but holds, instead of a sealed key, the
// person's access sealed under the cookie's secret: their email as the
// actor of the changes they make, and the rule's role and projects as
// they were at sign-in. The session cookie is SameSite=Strict, which a
// browser does not send within the navigation coming back from the
// provider: the callback answers with a short page that moves on by
// itself (a meta refresh), rather than a redirect.
//
// # Changes
//
// Promote, roll back and deactivate are compare-and-swaps: each form
// carries the prompt's revision as the page showed it, and the Store
// refuses the change when the prompt has moved on since. The answer is
// 412 with a page that says what changed (new versions, other
// deployments) and the form again, as it now stands; nothing changed.
// The promotion guard's refusal is 409, naming the added and removed
// variables, with the checkbox "Allow variable change" to override it.
// Every change records the key's name (or the person's email) as its
// actor, and the reason typed, in the deployment history, as the HTTP
// interface does. Text typed into a form is stored with \n line ends.
//
// A split is set from the promote page's split form
// (promote?split=1): a row per entry, a version and a weight (split.N.version
// and split.N.weight, N from 1), and "Add an entry", a submit button
// that answers the form again with one row more and changes nothing, so
// that it needs no script. Rows left empty are left out; a row with a
// version and no weight, or a weight and no version, and a split the
// Store refuses, are 400 naming the row; a version the prompt does not
// have is 404. Pages say a split as its versions with their shares of
// subjects: "versions 3 (90%) and 4 (10%)".
//
// Rendering a version on its render page gives every variable the text
// of its field, an empty field included: an empty field is the empty
// string, not a missing value (the page says so), since a form cannot
// tell an empty value from no value. Only a field the form does not send
// at all is missing. The page takes an optional subject too: it says
// which version each environment that holds a split serves the subject,
// and a dotprompt version's partials are read for it.
//
// # Chat prompts
//
// A dotprompt version (prompts.FormatDotprompt) is shown as its
// template, its messages (rendered with its input.default values), each
// under a heading naming its role, and its front matter as settings:
// model, config as keys and values, the input and output schemas as
// tables of properties (Picoschema compiled as Dotprompt does), tools,
// and the rest as JSON. Its render page reads each variable's field as
// JSON, or as text when "Text" is chosen beside it (the default for a
// property the schema, or its default, says is a string); an empty JSON
// field gives no value, so its default applies. A value that is not
// JSON is 400, naming the field and where it stops being JSON; history
// (Dotprompt's messages) and context (the @ data) are optional JSON
// fields. The result is the messages, with the model and its config
// beside. A new version chooses its template format (the latest
// version's, to start with) and types its metadata as Model, Config (a
// JSON object) and the rest as JSON, merged into one object; comparing
// two versions names the template formats and the settings added,
// removed and changed.
//
// Forms and the queries of addresses are read strictly, as the HTTP
// interface reads bodies: a field given twice, or one whose name or
// value is not valid UTF-8, is 400 with a page that names it, and
// nothing changes (the search of a project's prompts too: q=%ff is
// refused, not searched for as something else). The interface's own
// forms never send either.
//
// # Replicas
//
// The default SessionStore keeps sessions in the memory of the process,
// and forgets expired ones lazily (no goroutine runs behind the caller's
// back). With several replicas behind a load balancer, either route each
// browser to one replica (sticky sessions) or give every replica the
// same shared SessionStore (WithSessionStore) and the same secret
// (WithSecret): each handler otherwise makes its own, and a sign-in
// form served by one replica and posted to another is refused (403,
// the form again, which then works if the next post reaches the same
// replica).
//
// # Pages
//
// The pages, shown under the default prefix, /ui/ (DefaultPrefix, where
// cmd/promptsd serves them); mounted as in the example above, each path
// begins with /admin/prompts/ instead:
//
//	GET  /ui/                                  the projects (signed in), or the sign-in form
//	POST /ui/signin, /ui/signout
//	GET  /ui/projects/{project_id}?q=          a project's prompts, grouped by folder, searched by key
//	GET  /ui/projects/{project_id}/prompts/new, POST /ui/projects/{project_id}/prompts
//	GET  /ui/prompts/{prompt_id}               what is active where, the versions, the history
//	GET  /ui/prompts/{prompt_id}/versions/{n}  a version
//	GET  /ui/prompts/{prompt_id}/compare?from=&to=
//	GET  /ui/prompts/{prompt_id}/versions/new, POST /ui/prompts/{prompt_id}/versions
//	GET  /ui/prompts/{prompt_id}/promote,    POST the same   (?split=1: a split)
//	GET  /ui/prompts/{prompt_id}/rollback,   POST the same
//	GET  /ui/prompts/{prompt_id}/deactivate, POST the same
//	GET  /ui/prompts/{prompt_id}/versions/{n}/render, POST the same
//	GET  /ui/static/…                          styles and script, with content-hashed names
//	GET  /ui/keys, POST the same               API keys (admin): the list; a new key, its secret shown once
//	POST /ui/keys/{key_id}/revoke              revoke a key kept in the store
//
// The keys page needs a Store that keeps keys (prompts.KeyStoreOf; 404
// otherwise). It lists the keys of the Authenticator's configuration
// (read-only) when the Authenticator has a ConfiguredKeys method
// (httpapi.Keys, httpapi.StoreKeys), and tells it of a revocation
// through its Forget method (httpapi.StoreKeys) when it has one.
//
// A path of the list asked with another method is 405 with the Allow
// header (OPTIONS included), as over the HTTP interface; any other path
// is 404. Every answer carries a Content-Security-Policy that allows
// nothing but the prefix's own styles and script (and no framing),
// X-Content-Type-Options: nosniff, Referrer-Policy: same-origin and
// X-Frame-Options: DENY (for browsers that predate frame-ancestors);
// pages are not cached.
package ui
