package prompts

import "context"

// ActiveReader is what a Store offers besides Store when it can read a
// prompt in an environment with options GetActive and GetActiveByKey do
// not take. Find it by type assertion on the store itself (never through
// Unwrap: a store's reads are its own), or call ReadActive, which does so
// and falls back on GetActive and GetActiveByKey for a store without it.
//
// ReadActive answers what GetActive (for q.PromptID) or GetActiveByKey
// (for q.ProjectID and q.Key, when q.PromptID is empty) answers, errors
// included, as q's options allow. Each option is a permission or a hint,
// never a change of what the answer means: a store ignores those it has no
// use for.
//
//   - Shared lets the store answer with values it shares with other
//     callers instead of a copy, saving the copy's allocations. The caller
//     must change nothing the answer points to (the description, the
//     active version, its change summary, metadata and variables). The
//     store never changes them either: a later write makes new values.
//   - Fresh asks for an answer from the store of record, not from memory
//     kept in front of it: a cache reads the store under it, with the same
//     query, and keeps nothing of the answer; a client asks its server for
//     the same. A fresh answer is never stale: when the store of record is
//     unavailable, the read fails with ErrUnavailable.
//   - FailFast says the caller has an answer of its own to give should the
//     read fail with ErrUnavailable (a cache's last value known, or its
//     fallback): a store that would wait for a backend it cannot reach,
//     or retry it, tries once and fails at once instead.
//
// An ActiveReader answers q.Subject as the function ReadActive does: the
// answer picked for the subject (ActivePrompt.Pick).
//
// stale reports an answer given from what the store last knew, because the
// store of record was unavailable (a cache's stale-if-error, or its
// fallback snapshot). A store that keeps no such answers never reports it.
//
// A store without ReadActive is read with GetActive and GetActiveByKey:
// its answers are copies, never stale, and it has no memory to bypass and
// no retries to skip.
//
// A type that embeds a store has the store's ReadActive too (Go promotes
// it), and callers that find it read through it, not through the type's
// own GetActive: a type that answers GetActive or GetActiveByKey its own
// way defines ReadActive as well, or embeds the store as a Store
// (struct{ prompts.Store }), which has no ReadActive.
type ActiveReader interface {
	ReadActive(ctx context.Context, q ActiveQuery) (a ActivePrompt, stale bool, err error)
}

// ActiveQuery names a prompt in an environment, by id or by key, and
// says how ActiveReader reads it (see there).
type ActiveQuery struct {
	PromptID    string // the prompt's id; when empty, the prompt with Key in ProjectID
	ProjectID   string
	Key         string
	Environment Environment
	// Subject, when not "", is who the read is for (a user, a session, a
	// tenant: whatever the application names): when the environment holds
	// a split, the answer's ActiveVersion is the version the split serves
	// the subject (ActivePrompt.Pick). Without one ("" is none, never a
	// subject that is hashed), a split serves its first entry's version.
	// The HTTP interface, MCP's tools and the prompts command refuse an
	// empty subject where one is typed: a caller meaning none leaves it out.
	Subject string

	Shared   bool // the answer may be the store's own: the caller changes nothing it points to
	Fresh    bool // from the store of record, bypassing any cache; never stale
	FailFast bool // the caller has an answer of its own: fail at once rather than wait or retry
}

// ReadActive reads q from s: with s's ReadActive when s is an
// ActiveReader, else with GetActive or GetActiveByKey (never stale).
//
// With q.Subject, the answer is picked for the subject (ActivePrompt.Pick):
// by s's ReadActive, whose contract it is, or here for a store without
// one.
func ReadActive(ctx context.Context, s Store, q ActiveQuery) (a ActivePrompt, stale bool, err error) {
	if r, ok := s.(ActiveReader); ok {
		return r.ReadActive(ctx, q)
	}
	if q.PromptID != "" {
		a, err = s.GetActive(ctx, q.PromptID, q.Environment)
	} else {
		a, err = s.GetActiveByKey(ctx, q.ProjectID, q.Key, q.Environment)
	}
	return a.Pick(q.Subject), false, err
}
