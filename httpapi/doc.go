// Package httpapi serves the /v1/integration HTTP interface of prompt
// management over any prompts.Store: create prompts and versions, read a
// prompt with the version active in an environment, promote and roll back,
// list prompts, versions and projects; create projects and take snapshots
// of them; read and follow the log of changes, and subscribe webhooks to
// it.
//
// New returns an http.Handler to mount on the application's own mux, at
// the root or under a prefix:
//
//	keys := httpapi.NewKeys()
//	err := keys.Add(httpapi.Key{Name: "ci", Role: httpapi.RoleDeploy, Secret: os.Getenv("PROMPTS_API_KEY")}) // every project
//	if err != nil {
//		log.Fatal(err)
//	}
//	h := httpapi.New(store, httpapi.WithAuthenticator(keys), httpapi.WithLogger(logger))
//	mux.Handle("/v1/integration/", h)                        // at the root, or
//	mux.Handle("/prompts/", http.StripPrefix("/prompts", h)) // under a prefix
//
// Every request carries one X-API-Key header. A missing, empty or unknown
// key, or two keys, is 401 on every path, before any other check; without
// WithAuthenticator every request is 401. Each key has a name (the actor
// of its changes in the deployment history) and a Role: read (every GET,
// and rendering), write (also creating and updating prompts, and versions
// that activate nothing), deploy (also activating, deactivating, rolling
// back, versions created active in environments, and changing a prompt's
// key, which changes what the reads by key answer), admin (everything). A
// request the key's role does not allow is 403 (forbidden, naming the role
// it needs), after routing and before anything else; but whether a
// version create activates or a PATCH renames depends on the body, so
// those are checked right after the field rules (a PATCH that gives the
// key the prompt has needs only write; to tell, the prompt is read, so an
// unknown one is 404 first). A key may see every
// project or a named set; other projects' resources answer 404 and never
// appear in
// lists. Implement Authenticator to keep keys elsewhere.
//
// Every success is 200 (a create also sends Location; a deletion is 204;
// a conditional read that matched is 304). Every error is an RFC 9457
// problem (application/problem+json) with a code member: invalid_request
// 400, unauthenticated 401, forbidden 403, not_found 404, method_not_allowed 405,
// request_timeout 408 (the body did not arrive before the server's read
// deadline, http.Server.ReadTimeout), conflict 409, variables_changed 409,
// precondition_failed 412, payload_too_large 413, unsupported_media_type
// 415, idempotency_key_reused 422, internal 500 (the cause goes to the logger, never to the body),
// events_expired 410 (see Events), not_implemented 501 (the Store keeps no
// event log or webhooks) and unavailable 503 (with Retry-After). The code comes from the code of the
// domain's error (prompts.Code) where there is one, so that a Store's
// error answers the same whichever Store it is. Lists page with limit and
// after and a Link header with rel="next"; the URLs in Link and Location
// are relative references, right however the handler is mounted.
//
// Every POST that writes (a create of a prompt or a version, a rollback)
// takes an Idempotency-Key header (1 to 255 printable ASCII characters;
// "abc" quoted is abc): a repeat with the same key and the same request
// (method, path with its query, body bytes) writes nothing and answers as
// the first success did (status, Location), with Idempotent-Replayed:
// true and the resource the first made or changed read again as it is
// now: a version as it was made, a prompt renamed since under its new
// name, a rollback's environment as a read of it answers now (ETag
// included); the same key with another request is 422. Keys are scoped to the API key's name (Access.Name)
// and kept by the Store, in the same atomic step as the write, for
// prompts.IdempotencyRetention. Clients should send one on every write they
// may retry: a 503 (or a timeout, or a lost connection) on a write does not
// prove that nothing was written.
//
// Checks run in this order, and the first that fails answers:
// authentication; route and method; permission (403); media type, size
// and body syntax; field rules; existence; precondition (412); conflicts. A refused
// request changes nothing.
//
// # Projects, fresh reads and snapshots
//
// POST /projects creates a project (role admin, with a key of every
// project: a key limited to some could not see what it made, 403); it
// takes no Idempotency-Key, and a repeat finds its slug taken, 409. GET
// /projects/{id} reads one.
//
// A read (of a prompt, an environment, a key, a version, a project) whose
// request says Cache-Control: no-cache or max-age=0, or, without
// Cache-Control, Pragma: no-cache, is answered by the store under the
// handler's store when that is a cache (package cache, or any store with
// a Next method that returns the store under it): a client reads at once
// what it wrote through another replica. Such an answer is never stale.
//
// GET /projects/{id}/snapshot (role read) answers every prompt of the
// project with the version active in each environment, as
// cache.Snapshot's MarshalJSON writes it, from the store under the cache,
// written as it is read (cache.WriteSnapshot), never held whole; a
// project past cache.MaxSnapshotPrompts prompts or
// cache.MaxSnapshotSize bytes of text is 413, naming the bound, unless
// the text passes it after the answer started: the answer is then cut
// short (http.ErrAbortHandler), as it is when the store fails then, so
// that no client takes it for a whole snapshot.
//
// # Entity tags
//
// A read of a prompt in an environment (GET /v1/integration/prompts/{id})
// sends a strong ETag and answers 304 to an If-None-Match that holds it.
// The tag is not a hash of the body: it is made of the prompt's id, the
// environment, and the prompt's revision (prompts.Prompt.Revision), which
// every Store moves on with each change to the prompt, its versions or
// what its environments point at, and a number for the form of the body
// that a release changing the body's fields moves on. So the tag changes
// whenever the body may, is the same on every replica that reads one
// database, and is known before the body is encoded: a 304 costs no
// encoding. Tags are strong: equal tags mean equal bodies, byte for byte.
// So the handler encodes a read's body once per tag and sends the same
// bytes to the reads after it, until the prompt changes: it keeps the
// latest 512 such bodies of up to 32 KiB (16 MiB at most), one per hash
// of the tag. The tag of an environment that holds a split names the
// version served too (…-1763900000123456-v3): each version of a split
// has its own tag, its own 304 and its own kept bytes.
//
// # Splits
//
// PUT /prompts/{id}/environments/{env} with {"split": [{"version_number":
// 3, "weight": 90}, {"version_id": "…", "weight": 10}]} makes the
// environment serve each version to a share of subjects (prompts.Split;
// exactly one of version_id, version_number and split, else 400 naming
// the field, as split[1].weight; a version not of the prompt is 404). The
// reads of a prompt in an environment (GET /prompts/{id}?environment=,
// GET /projects/{project_id}/prompts/{key}, GET
// /prompts/{id}/environments/{env}) take subject=: with one, an
// environment that holds a split answers the version the split serves
// the subject, without one its first entry's; the answer then holds
// "split", the split's entries with their version_id, version_number and
// weight, which answers of an environment without a split do not (their
// bytes are those of before splits). POST …/render takes "subject" too.
// Deployment records and deployment.created events carry "split" and
// "previous_split" when they have one; the action of setting a split is
// split.
//
// # Deployments and compare-and-swap
//
// Every change of what an environment points at (PUT and DELETE of
// /prompts/{id}/environments/{env}, POST …/rollback, a version created
// with environments) writes a deployment record, in the same atomic step,
// with the key's name as its actor (Access.Name) and the reason the
// request gives; GET /prompts/{id}/deployments lists them, newest first.
// A request that changes nothing records nothing. PUT, DELETE and
// rollback take If-Match with the ETag of the prompt in that environment
// (a read sends it, and so do PUT and rollback): unless it is current,
// 412 and nothing changes, and of concurrent changes carrying one tag at
// most one succeeds, across every process on one database, for the Store
// checks the revision in the tag under the prompt's lock
// (prompts.Change.IfRevision): the revision, not the version a split's
// tag names after it, which the swap ignores. Since the revision covers
// the whole prompt, a rename or a new version also fails an older tag:
// the swap errs on the side of caution. A weak tag, or a tag of another
// prompt or environment, never matches; "*" asks only that the prompt
// exists. The answers to a create and an update of a prompt (POST
// /prompts, PATCH /prompts/{id}) send the tag that the read of the
// prompt in production without a subject sends at the revision the
// write made (of a split, naming its first entry), so that a client
// learns the revision its write made; the handler reads production after
// the write to learn it, and sends no tag when another change came in
// between.
//
// # Templates
//
// The version list and read carry each version's template_format and
// variables; create version takes template_format (plain or dotprompt;
// absent, the latest version's) and its answer names it in a
// Template-Format header, its body's fields being fixed. A dotprompt
// template that does not parse, or that includes a partial whose name is
// not a prompt key, is 400 for content. POST /prompts/{id}/render
// renders the version active in an environment, or a version by number
// (prompts.Renderer, a version parsed once and kept in a bounded
// cache by version id), to messages and text: a plain version strictly
// (a missing, non-string or unused value is 400 with one errors entry a
// variable), a dotprompt version as Dotprompt does (values any JSON, a
// value not given empty, an unused one 400 unless allow_unused; history
// and context). A dotprompt version's metadata_ is its front matter:
// the Dotprompt keys of the wrong shape are 400 naming the key
// (metadata_.config, metadata_.input.schema, …; see
// prompts.VersionSignature); with an input schema, the values are
// checked against it (400, one entry a variable); the answer's model,
// config and output are the front matter's, null when absent. The
// promotion guard (prompts.Change.AllowVariableChange) answers 409
// variables_changed, with one errors entry a variable added or removed,
// or whose type or requiredness in the input schema changes, to a PUT,
// rollback or version created active whose version would change the
// variables the environment's version uses; the body's
// "allow_variable_change": true lets it through.
//
// Partials ({{> KEY}}) are the prompts of the same project with that key,
// at their versions active in the environment rendered (production for a
// render by version_number); the version list and read carry each
// version's partials. A render whose partial is missing or inactive there,
// or whose partials cycle or nest more than 16 deep, answers 409
// partial_unavailable naming it or the chain. A PUT, rollback or version
// created active whose partials have nothing active in that environment
// answers 409 partial_unavailable unless "allow_missing_partials": true;
// a DELETE of a prompt that a version active there includes answers 409
// partial_in_use, naming the prompts that include it, unless
// ?force=true (true or false; anything else is 400).
//
// # Events
//
// GET /events (role read) lists the log of changes (prompts.EventLog):
// one event a change, oldest first, paged as lists are, with after an
// event's id (the decimal digits of a positive integer; 0 and anything
// else is 400) and project_id as the prompt list takes it. A key sees the
// events of its projects only. An after older than the oldest event kept
// is 410 events_expired: the reader missed events that are gone and must
// read everything again.
//
// The same request with an Accept header that names text/event-stream
// (whatever else it names: a client that asks for the stream gets it;
// */* alone gets JSON) is a server-sent event stream. It starts after the
// Last-Event-ID header, else after the after parameter, else with the
// next event appended (limit does not apply); 410, 404, 400 and the
// store's errors come before it starts. Each event is written as
//
//	id: 42
//	event: version.created
//	data: {"id":"42","type":"version.created",…}
//
// and a blank line, flushed at once, in the order of the ids (so the
// events of one change in their order: a version before its deployment
// records); a comment line, ": keep-alive", goes out when nothing else
// has for WithStreamKeepAlive (15 s by default). The headers are
// Content-Type: text/event-stream, Cache-Control: no-cache and
// X-Accel-Buffering: no (so that nginx passes each event on). Each write
// moves the connection's write deadline on, so that http.Server's
// WriteTimeout does not cut the stream; a deadline on the request's
// context would, so exempt the path from yours. A stream ends when the
// client leaves, when a write fails, when the client fell behind the
// events kept (reconnecting then answers 410), or at CloseStreams, after
// which new stream requests are 503: register CloseStreams with
// http.Server.RegisterOnShutdown. While the store is unavailable a stream
// stays open (keep-alives go on), and then goes on where it was.
//
// A stream is its handler's goroutine and nothing else. A Handler's
// streams share the tail of the log: one of them at a time waits on the
// store (EventLog.WaitEvents) and reads the new events once for all,
// encoded once; the others take the events of their projects from it.
// So a thousand streams cost one store read per event, not a thousand.
// The tail keeps the newest events, up to 1024 of them or 8 MiB; a stream
// further behind reads the store itself until it catches up.
//
// # Webhooks
//
// Every /webhooks route needs the admin role, reads included: a URL may
// hold a token. POST /webhooks with {"url", "events", "project_id"}
// subscribes the URL to the events of those types (all, those added later
// included, when events is empty or absent) of that project (when
// project_id is absent or null: every project the key may see, that is
// every project for a key of every project, else the key's own). The
// answer holds the secret that signs the deliveries, once; the reads
// never show it. In the answers, project_id is the webhook's one project,
// or null when it has several or every project. A key restricted to
// projects sees the webhooks whose projects are all among its own; the
// others answer 404 as unknown ones do. A URL whose host is, or resolves
// to, a loopback, private, link-local, unspecified or multicast address is
// 400 on url (webhook.CheckURL), unless AllowPrivateWebhooks; so is a host
// that does not resolve, while a DNS that does not answer is 503. A
// create takes no Idempotency-Key: repeated, it makes a second webhook.
// GET /webhooks/{id}/deliveries lists the attempts of package webhook's
// dispatcher, which the application runs, newest first.
//
// # API keys
//
// POST /keys, GET /keys and DELETE /keys/{key_id} (admin) manage the keys
// the Store keeps (prompts.KeyStoreOf; 501 over a Store that keeps none):
// the answer to POST /keys holds the new key's secret, once; GET /keys
// lists the keys without secrets, the Authenticator's configured ones
// first (read-only, "source": "config", when it has a ConfiguredKeys
// method, as Keys and StoreKeys do); DELETE revokes, and tells the
// Authenticator at once through its Forget method (StoreKeys). A key of
// some projects sees, makes and revokes keys of its projects only, and
// none above its own role (the Store checks it, prompts.Grant).
// StoreKeys authenticates the kept keys beside configured ones; run its
// Watch so that it remembers keys and still refuses a key revoked on
// another process within a second. docs/keys.md has the whole story.
//
// Over a Store that keeps no event log or webhooks (where
// prompts.EventLogOf or prompts.WebhookStoreOf finds none, a cache over
// such a store included), or whose methods return errors.ErrUnsupported,
// those routes answer 501 not_implemented, after
// authentication and the role check: the interface is the same
// everywhere, and a client learns that this server cannot serve it.
//
// # Limits
//
// What one request can make the handler do is bounded by what it sends or
// what is stored:
//
//   - A request body is at most 1 MiB (WithBodyLimit), else 413. It is
//     one JSON object in valid UTF-8, nesting at most 10,000 levels, with no
//     \u escape of half a UTF-16 surrogate pair (bad bytes are never read
//     as U+FFFD) and no name given twice in any object, metadata_'s and
//     variables' included, else 400 naming the problem (a name given
//     twice is named in errors, as in metadata_.a.b).
//   - metadata_ nests at most 32 levels and encodes to at most 64 KiB.
//   - A render's text is at most prompts.MaxRenderSize (4 MiB): a larger
//     one is refused before it is built (a dotprompt one as soon as its
//     output would pass it, inside loops too), 400 for the field
//     variables, naming the size and the limit. A dotprompt template
//     nests at most 64 blocks deep.
//   - A problem's errors lists at most MaxProblemErrors entries; its
//     detail then gives how many there are.
//   - A list answers at most 1000 items a page (limit; 100 by default),
//     and at most MaxListBody (4 MiB) of JSON: fewer items then, with the
//     Link to the rest.
//   - The answers being written at once hold at most WithMaxAnswerMemory
//     bytes (DefaultMaxAnswerMemory, 256 MiB): past it, a read is 503
//     with Retry-After, so that slow clients of large answers cannot make
//     the server's memory grow without bound.
//   - A request carries one X-API-Key: two are 401.
//
// The interface is described by openapi.yaml beside this file (OpenAPI
// 3.1); the package's tests check every response they receive against it,
// and that each operation declares every status it can answer (405 on
// every operation: a router that decodes %2F before matching may take a
// request for another path for it).
package httpapi
