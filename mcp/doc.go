// Package mcp serves the prompts of a prompts.Store over the Model Context
// Protocol, on the official Go SDK (github.com/modelcontextprotocol/go-sdk),
// so that an MCP client (a desktop assistant, an IDE, an agent) lists,
// renders, and, as its key allows, changes them.
//
// New returns a Handler: an http.Handler of the Streamable HTTP transport,
// and, with Serve, a server over any other transport of the SDK (stdio).
// The standalone server mounts it at /mcp; `prompts mcp` serves it over
// stdio, through package client, for desktop clients.
//
// # Prompts
//
// prompts/list lists, for the session's environment (production, or
// WithEnvironment's, or ?environment= on the URL that opens the session),
// the prompts the key may see that have a version active there, named
// PROJECT/KEY (the project's slug, a slash, the prompt's key, which may hold
// slashes itself). A prompt's description is its own; its arguments are
// the variables of its active version. When the version's metadata_ has an
// input schema (input.schema, in JSON Schema or Dotprompt's Picoschema), an
// argument's description and whether it is required come from it; without
// one, every variable of a plain version is required (its rendering is
// strict) and none of a dotprompt version's.
//
// prompts/get renders the active version with the arguments and answers
// its messages, with "prompt_id", "version_id", "version_number" and
// "environment" in _meta. An MCP prompt cannot express a split nor name
// a subject: where the environment holds a split, prompts/list and
// prompts/get serve its first entry's version (its arguments, its
// messages, its partials'); the tools get_prompt and render_prompt take
// a subject for the version the split serves it. MCP has the roles user and assistant only:
// Dotprompt's model is assistant; system (and tool) messages are user
// messages. A media part is an image or audio content when its URL is a
// base64 data: URL of such a type, else a resource link to its URL.
//
// MCP's arguments are strings. For a dotprompt version whose input schema
// gives a property the type number, integer, boolean, object or array,
// the argument is read as JSON (42, true, ["a","b"]); an argument that is
// not of that type is an error naming it. Every other argument is the
// string given. An unknown prompt, a missing or unused argument, or one
// of the wrong type is a JSON-RPC error (invalid params) naming it, and
// the session goes on.
//
// When what is active in the session's environment changes (a promotion,
// a rollback, a split, a version created active there, even when the
// listing looks the same) or a prompt's key or
// description changes, the sessions that see it get
// notifications/prompts/list_changed, within a second (the store's event
// log, prompts.EventLogOf, says what changed; a store without one sends
// none).
//
// # Tools
//
// Five tools, each allowed as the key's role allows over the HTTP
// interface; a refusal is a tool error naming the role needed:
//
//   - list_prompts (read): the prompts the key may see, with the version
//     active in an environment (environment, project, after, limit), and
//     its split when it holds one.
//   - get_prompt (read): a version's content, format, variables and
//     metadata: the one active in environment, or the one numbered
//     version. Where the environment holds a split, subject (a user, a
//     session, a tenant) picks the version it serves that subject, as an
//     application's read with that subject does (without one, absent or
//     null, the split's first entry's), and the answer has the split; an
//     empty subject, and a subject with a version, are errors naming it.
//   - render_prompt (read): get_prompt's version (subject included)
//     rendered with variables (any JSON for a dotprompt version), to
//     messages in Dotprompt's shape and their text; its partials at the
//     versions their environment serves the subject.
//   - create_version (write; deploy when environments is not empty): the
//     next version of a prompt.
//   - activate_version (deploy): version_number made active in environment,
//     or split, {"split": [{"version_number": 3, "weight": 90},
//     {"version_number": 4, "weight": 10}]}, making the environment serve
//     each version to weight / sum of weights of subjects (2 to 10
//     versions, weights 1 to 10000), with a reason for the deployment
//     history. A protected environment needs admin, as over HTTP.
//
// A tool names its prompt by key: PROJECT/KEY as prompts/list names it, or
// the key alone with project, or the key alone when the key sees one
// project only. The actor of a change is the key's name.
//
// # Keys and sessions
//
// Every HTTP request carries a key, in X-API-Key or as Authorization:
// Bearer <key>, checked by WithAuthenticator's httpapi.Authenticator (the
// same as the /v1/integration interface's); the key's role and projects
// bound what its sessions see and do. A session belongs to the key that
// opened it: another key's request with its id is 404. WithSessionGate lets
// an application bound the sessions of a key (the standalone server counts
// them with its event streams). A session whose client has had no request
// under way (its stream, GET, included) for 10 minutes ends
// (WithSessionTimeout), so that a client gone without ending its session
// gives its place back. The sessions of a kept key (httpapi.Access.KeyID)
// end when the event log says it was revoked (key.revoked), and at its
// expiry (httpapi.Access.ExpiresAt).
//
// # Goroutines
//
// The handler runs nothing before a session opens. A session has the
// goroutines of the SDK, and one of this package that waits for its end.
// The sessions of one key in one environment share one SDK server, whose
// prompts are kept as the store has them; and while any session is open,
// one goroutine of the handler (not one per session) follows the event log
// for all of them, and stops with the last session. Close ends every
// session, Serve's too, and returns once all those goroutines have; Serve
// returns when its session ends.
//
// # Partials
//
// Rendering resolves partials ({{> name}}) as the root package's renderer
// does once it does; until then a version with partials cannot be stored.
package mcp
