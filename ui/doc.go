// Package ui is a web interface to a prompts.Store, for the people who
// write, compare, promote and roll back prompts: an http.Handler that an
// application mounts at a prefix of its choice, behind the same
// Authenticator as its HTTP interface.
//
//	h, err := ui.New(store, keys, ui.WithPrefix("/admin/prompts/"))
//	if err != nil { ... }
//	mux.Handle("/admin/prompts/", h)
//
// Pages are rendered on the server with html/template; the styles and
// the little script they use are embedded in the binary and served under
// the prefix, so the interface loads nothing from another origin, and
// every page and every action works with scripts turned off (the script
// only adds a live list of variables while typing a version, and a few
// keyboard shortcuts: "/" to search, Ctrl+Enter to submit a form).
//
// # Signing in
//
// A person signs in with an API key. The key becomes a session: the
// server keeps the session (the Access the Authenticator gave the key,
// a CSRF token, and when it was last used) in a SessionStore, and the
// browser holds only a random id in a cookie that is HttpOnly,
// SameSite=Strict, Secure over TLS (or always, with WithSecureCookies),
// and scoped to the prefix. The key itself is kept nowhere. A session
// ends at sign-out, after 8 hours without a request (WithIdleTimeout),
// and after 24 hours in any case (WithMaxAge): a key that is revoked in
// the Authenticator signs in no more, and its open sessions end within
// that day at most (the key is not kept, so it cannot be checked again).
//
// The key's role and projects bound everything the interface shows and
// does, exactly as over the HTTP interface: a read key sees no Promote,
// and a forged request is refused by the server all the same (403); a
// project the key may not see is not listed, and its pages are 404.
// Every form that changes something carries the session's CSRF token; a
// POST without a valid one is 403 and changes nothing. Requests that a
// browser marks as cross-origin are refused too
// (http.CrossOriginProtection). Failed sign-ins are limited per client
// address (WithSignInLimit); behind a reverse proxy every client shares
// the proxy's address, so give the limit room, or put one in the proxy.
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
// Every change records the key's name as its actor, and the reason
// typed, in the deployment history, as the HTTP interface does. Text
// typed into a form is stored with \n line ends.
//
// # Replicas
//
// The default SessionStore keeps sessions in the memory of the process,
// and forgets expired ones lazily (no goroutine runs behind the caller's
// back). With several replicas behind a load balancer, either route each
// browser to one replica (sticky sessions) or give every replica the
// same shared SessionStore (WithSessionStore).
//
// # Pages
//
// Under the prefix (/ui/ here):
//
//	GET  /ui/                                  the projects (signed in), or the sign-in form
//	POST /ui/signin, /ui/signout
//	GET  /ui/projects/{project_id}?q=          a project's prompts, grouped by folder, searched by key
//	GET  /ui/projects/{project_id}/prompts/new, POST /ui/projects/{project_id}/prompts
//	GET  /ui/prompts/{prompt_id}               what is active where, the versions, the history
//	GET  /ui/prompts/{prompt_id}/versions/{n}  a version
//	GET  /ui/prompts/{prompt_id}/compare?from=&to=
//	GET  /ui/prompts/{prompt_id}/versions/new, POST /ui/prompts/{prompt_id}/versions
//	GET  /ui/prompts/{prompt_id}/promote,    POST the same
//	GET  /ui/prompts/{prompt_id}/rollback,   POST the same
//	GET  /ui/prompts/{prompt_id}/deactivate, POST the same
//	GET  /ui/prompts/{prompt_id}/versions/{n}/render, POST the same
//	GET  /ui/static/…                          styles and script, with content-hashed names
//
// Every answer carries a Content-Security-Policy that allows nothing but
// the prefix's own styles and script, X-Content-Type-Options: nosniff and
// Referrer-Policy: same-origin; pages are not cached.
package ui
