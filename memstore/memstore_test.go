package memstore_test

import (
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock prompts.Clock) prompts.Store {
		return memstore.New(memstore.WithClock(clock))
	})
}
