package storetest

import (
	"strings"

	"github.com/promptkit/prompts"
)

// A Store that reaches its data through an interface of its own (package
// client, over HTTP) may record or answer two things its own way, which
// it declares with these optional interfaces of the Store that Run's
// newStore returns. Run then checks the rule as that Store keeps it,
// instead of the local one.

// RecordedActor is for a Store that records as the actor of every change
// the identity it is reached with (over HTTP, the API key's name, so
// that a caller cannot act as another), not the Actor the caller names
// (prompts.Change.Actor, prompts.NewVersion.Actor). RecordedActor returns
// that identity: Run expects it as the actor of every deployment record,
// those of changes that named no actor or another one included. Without
// it, Run expects the actor the caller named, or none.
type RecordedActor interface {
	RecordedActor() string
}

// EventPromptsWithoutRevision is for a Store whose event log answers the
// prompt of a prompt.created or prompt.updated event without its
// Revision (0): over HTTP an event sends the prompt as the list of
// prompts does, whose fields hold no revision. Run then expects such a
// prompt as GetPrompt answers it right after the change but with a
// Revision of 0, never another. Without it, Run expects the revision too.
type EventPromptsWithoutRevision interface {
	EventPromptsWithoutRevision()
}

// records returns the deployment records want (as recordText writes
// them) as the Store keeps them: for a RecordedActor, each with the
// recorded actor in place of the one named.
func (s *fixture) records(want []string) []string {
	ra, ok := s.Store.(RecordedActor)
	if !ok {
		return want
	}
	out := make([]string, len(want))
	for i, w := range want {
		// "action env version<-previous actor reason"; the reason may
		// hold spaces.
		f := strings.SplitN(w, " ", 5)
		if len(f) < 5 {
			s.t.Fatalf("storetest: a record's text with no actor: %q", w)
		}
		f[3] = ra.RecordedActor()
		out[i] = strings.Join(f, " ")
	}
	return out
}

// eventPrompt returns the prompt p as the Store's events carry it: for
// EventPromptsWithoutRevision, without its revision.
func (s *fixture) eventPrompt(p prompts.Prompt) prompts.Prompt {
	if _, ok := s.Store.(EventPromptsWithoutRevision); ok {
		p.Revision = 0
	}
	return p
}
