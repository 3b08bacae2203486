package sqlstore_test

import (
	"testing"

	"github.com/promptkit/prompts/storetest"
)

// TestStore runs the conformance suite: each subtest gets a Store in a
// migrated schema of its own.
func TestStore(t *testing.T) {
	database(t)
	storetest.Run(t, newStore)
}
