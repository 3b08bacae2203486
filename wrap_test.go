package prompts_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// wrapper wraps a store, passing the Store methods through, and says so
// (Unwrap); it claims no ability of its own.
type wrapper struct{ prompts.Store }

func (w wrapper) Unwrap() prompts.Store { return w.Store }

// logging wraps a store and keeps an event log of its own.
type logging struct {
	wrapper
	prompts.EventLog
}

// selfish is a wrapper whose Unwrap leads back to itself.
type selfish struct{ prompts.Store }

func (s *selfish) Unwrap() prompts.Store { return s }

// EventLogOf and WebhookStoreOf find an ability on the store, else down
// its Unwrap chain, and nowhere else.
func TestAbilitiesPassThroughUnwrap(t *testing.T) {
	mem := memstore.New()
	plain := struct{ prompts.Store }{mem} // every ability hidden, and no Unwrap
	own := logging{wrapper{mem}, memstore.New()}
	for name, tc := range map[string]struct {
		s          prompts.Store
		log, hooks any // what is found; nil: nothing
	}{
		"the store":                {mem, mem, mem},
		"a store without":          {plain, nil, nil},
		"under a wrapper":          {wrapper{mem}, mem, mem},
		"under two":                {wrapper{wrapper{mem}}, mem, mem},
		"under a wrapper, without": {wrapper{plain}, nil, nil},
		"a wrapper hidden":         {struct{ prompts.Store }{wrapper{mem}}, nil, nil},
		"a wrapper's own first":    {own, own, mem},
		"a wrapper over nothing":   {wrapper{}, nil, nil},
		"a chain that leads back":  {&selfish{}, nil, nil},
		"nil":                      {nil, nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			l, ok := prompts.EventLogOf(tc.s)
			is.Equal(ok, tc.log != nil) // an event log found
			if ok {
				is.True(any(l) == tc.log) // the first down the chain
			}
			w, ok := prompts.WebhookStoreOf(tc.s)
			is.Equal(ok, tc.hooks != nil) // webhooks found
			if ok {
				is.True(any(w) == tc.hooks) // the first down the chain
			}
		})
	}
}
