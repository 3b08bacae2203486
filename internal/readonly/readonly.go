// Package readonly lets this module's packages read a prompt in an
// environment without the copy that every prompts.Store method hands out.
// Such a read is on the path of every application (httpapi's read of a
// prompt, and of a prompt by key), and the copy was its largest
// allocation: a store that implements ActiveReader shares its own values
// instead, on the promise that the caller changes nothing they point to.
package readonly

import (
	"context"

	"github.com/promptkit/prompts"
)

// Token is the second argument of ActiveReader's methods. Only this
// module can name it, so that the methods, which show in the docs of the
// stores that have them, are not meant to be called from outside it.
type Token struct{ _ token }

type token struct{}

// ActiveReader is a store that can answer GetActive and GetActiveByKey
// with values it shares with every other caller. The caller must not
// change anything the answer points to (the description, the version,
// its change summary, metadata and variables): they are the store's.
// stale reports an answer given from what the store last knew, the store
// under it being unavailable (a cache's stale-if-error); a store without
// such answers never sets it.
type ActiveReader interface {
	GetActiveShared(ctx context.Context, _ Token, promptID string, env prompts.Environment) (a prompts.ActivePrompt, stale bool, err error)
	GetActiveByKeyShared(ctx context.Context, _ Token, projectID, key string, env prompts.Environment) (a prompts.ActivePrompt, stale bool, err error)
	// SharedBy returns the store whose methods these are. Go promotes
	// the methods of an embedded store to the type that embeds it, whose
	// own GetActive they would bypass: Of tells the two apart by it.
	SharedBy(Token) any
}

// Of returns store's shared reads when store itself has them, and false
// when it has none or only has them from a store it embeds: an
// application's type that embeds a *memstore.Store and answers
// GetActive its own way is read through its GetActive.
func Of(store any) (ActiveReader, bool) {
	r, ok := store.(ActiveReader)
	if !ok || r.SharedBy(Token{}) != store {
		return nil, false
	}
	return r, true
}
