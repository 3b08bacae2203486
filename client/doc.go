// Package client is a prompts.Store over the /v1/integration HTTP
// interface of a prompts server (cmd/promptsd, or httpapi mounted in an
// application), so that code written against memstore or sqlstore runs
// unchanged against a server, and a prompts.Feed over its event stream, so
// that a cache in front of it reads at memory speed and stays fresh:
//
//	cl, err := client.New("https://prompts.internal", os.Getenv("PROMPTS_API_KEY"))
//	if err != nil { ... }
//	c := cache.New(cl)
//	go cl.Feed().Run(ctx, c)
//	p, err := c.GetActiveByKey(ctx, projectID, "support/greeting", prompts.Production)
//
// The client starts no goroutine of its own (but for the concurrent reads
// of one ListPrompts call, which it waits for) and logs nothing unless
// given a logger (WithLogger). It sends its requests with its own
// http.Client, which keeps up to 64 idle connections to the server, or
// with the caller's (WithHTTPClient).
//
// # Abilities
//
// Besides prompts.Store, a Client is a prompts.ActiveReader: a read asked
// Fresh sends Cache-Control: no-cache, so that the server answers from its
// store rather than its cache; a read asked FailFast is tried once,
// without retries (see Retries); Shared changes nothing, and no answer is
// stale. It is a prompts.EventLog over the server's event log. It keeps
// no webhooks (prompts.WebhookStoreOf finds none): they are the server's
// to deliver.
//
// # Calls and errors
//
// Every method of prompts.Store maps to one request of the interface, or a
// few where the interface answers less than the Store returns (see each
// method). Inputs are checked first with their Validate method, as every
// Store does, and a malformed id is not found without a request. Errors
// are *prompts.Error: a problem's code is the error's Code (invalid_request
// is prompts.CodeInvalid, not_found prompts.CodeNotFound, and so on), its
// detail the Message and its errors the Fields; a 401 is
// prompts.CodeUnauthenticated and a 403 prompts.CodeForbidden; a server
// that cannot be reached, a 503, or an answer from a proxy that says so
// (502, 504) is prompts.CodeUnavailable; a context that ended is
// prompts.CodeUnavailable wrapping the context's error. A server whose
// store keeps no event log answers the EventLog methods with an error for
// which errors.Is(err, errors.ErrUnsupported) holds.
//
// What the interface records differs from a local Store in two ways. The
// actor of a change (prompts.Change.Actor, prompts.NewVersion.Actor) is
// not sent: the server records the API key's name, so that a key cannot
// act as another. And the prompt of a prompt.created or prompt.updated
// event (ListEvents) has no Revision: the event sends the prompt with the
// list's fields. An Idempotency's Request is not sent either: the server
// derives it from the request itself; its Scope is folded into the key
// (see RetryPolicy).
//
// The revision of a prompt comes from the ETag of the answers that carry
// one (reads of a prompt in an environment, writes of a prompt and of an
// environment), which the interface makes of the prompt's revision; a
// change with prompts.Change.IfRevision sends the matching If-Match. The
// client reads the tags of its own release's form.
//
// # What the client sends and reads
//
// The client sends its API key (X-API-Key) to the server's origin only.
// It follows a redirect within that origin (its scheme, host and port),
// but a redirect to another origin, http to https on the same host
// included, is refused: the call fails with an error that names where
// the redirect led (errors.Is(err, ErrOtherOrigin), code
// prompts.CodeInternal), without a request to it, and is not retried.
// (Go's http.Client drops only Authorization and Cookie on such a
// redirect; X-API-Key would follow.) Give New the URL the server is
// reached at.
//
// It reads at most 64 MiB of a JSON answer (DefaultMaxAnswerSize;
// WithMaxAnswerSize changes it) and at most 1 MiB of one event of the
// stream (MaxEventSize); beyond, the call fails with an error naming the
// limit (errors.Is(err, ErrTooLarge), code prompts.CodeInternal), not
// retried, so a server that answers without end costs the client about
// the limit in memory. A feed skips an event larger than that: it
// connects again after it, and its cache starts afresh (the event's
// change is unknown). Of an error answer, the client reads the first
// 64 KiB.
//
// # Retries
//
// A call that fails for want of the server (a 503, a timeout, a lost
// connection) is retried with jittered exponential backoff, honouring
// Retry-After, within the call's context (see RetryPolicy). Every write
// that creates (CreatePrompt, CreateVersion, Rollback) carries an
// Idempotency-Key: the caller's prompts.Idempotency.Key when it gives one,
// else a random ULID the client makes for the call and keeps across its
// retries. So a write whose answer was lost after the server did it is
// done once: the retry is answered as the first attempt was, marked
// Replayed. An Idempotency with a Scope sends the hex SHA-256 of its scope
// and key (prompts.Idempotency.RecordKey) as the key, so that one key in
// two scopes names two writes; the server scopes every key further by the
// API key's name. Request bodies are bytes, sent again as they are.
//
// A refused connection is retried too, so that a write made while the
// server restarts goes through once it is back. A read asked with
// FailFast is not retried: the client is a prompts.ActiveReader, and a
// cache over it asks so when it has an answer to give instead (its
// fallback snapshot, or the last value it knows while the feed is lost),
// so the read is tried once and the cache answers at once, marked stale.
// So an application that starts while the server cannot be reached
// answers from its embedded snapshot at once, and, through its
// feed, which tries the server at least once a second, reads fresh values
// within about a second of the server's return.
//
// # Reading one's own writes
//
// A server with many replicas behind a load balancer, each with a cache,
// learns of a write made through another replica from its feed, some
// milliseconds later. So for DefaultFreshWindow after a write of a prompt,
// the client's reads of that prompt, and its reads by key in its project
// (in every project after a version's create or a deactivation, whose
// answers do not name the project), send Cache-Control: no-cache, which the server answers
// from its store: a process reads its own writes at once, through any
// replica. The same holds after an event that the feed delivers: a cache
// over the client reads what another process changed from the server's
// store, whichever replica answers, and never keeps the older value that
// a replica whose own feed is behind still holds.
//
// A write made through the client itself, not through a cache over it,
// is told to the caches that the client's feeds report to (Feed.Run's
// sink) before the write returns, so such a cache does not answer what it
// held until the write's event arrives: write through the cache or
// through the client, the next read through the cache sees the write.
//
// # Splits
//
// An environment that holds a split (prompts.Split) serves each subject
// one of its versions, picked by a published formula (prompts.SplitPoint)
// that the client computes itself, so that a read for a subject costs no
// request once the split is known, through a cache over the client as
// through the client. The client reads the environment without a subject
// (GET /prompts/{id}?environment=): the answer holds the split (each
// entry's version_id, version_number and weight) and its first entry's
// version. The client then reads each other entry's version by number
// (GET /prompts/{id}/versions/{number}) the first time it sees it, and
// keeps it (up to 16 MiB of versions, starting again when full): a
// version never changes, so what it keeps is never stale, and a read of
// a split it has seen costs one request, as any read does. Its answer
// (prompts.ActivePrompt) carries Split and SplitVersions, every version
// of the split whole, and ActivePrompt.Pick (or ReadActive with
// ActiveQuery.Subject, which picks) serves a subject from them: a cache
// over the client holds the split and picks for every subject from
// memory. Activate sends a split given in prompts.Activation.Split, each
// entry naming its version by id when it has one, else by number.
//
// # The feed
//
// Feed follows the server's event stream for a cache (see Feed): every
// event is an invalidation; a stream that breaks resumes after the last
// event it saw, losing nothing, and says so with Resumed
// (prompts.Resumer), so that the cache keeps what it holds; only when the
// events it missed are gone (410) does the cache drop everything.
// WaitEvents also waits on the stream.
package client
