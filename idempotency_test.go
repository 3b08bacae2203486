package prompts_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// A record names the result of its write by ids, and costs the same
// whatever the size of that result or of the key, scope and request.
func TestIdempotencyRecordNamesItsResult(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 21, 22, 19, 26, 0, time.UTC)
	in := prompts.Idempotency{Key: strings.Repeat("k", prompts.MaxIdempotencyKey), Scope: strings.Repeat("s", 1024), Request: strings.Repeat("r", 1024)}
	v := prompts.PromptVersion{ID: "01V", PromptID: "01P", VersionNumber: 7, Content: strings.Repeat("x", 1<<20)}
	r := prompts.NewIdempotencyRecord("create_version", in, at, v)
	is.Equal(r, prompts.IdempotencyRecord{Op: "create_version", Request: in.RequestDigest(), At: at, PromptID: "01P", VersionID: "01V", VersionNumber: 7})
	is.Equal(len(r.Request), 64) // the request's digest, whatever its length

	a := prompts.ActivePrompt{Prompt: prompts.Prompt{ID: "01P"}, Environment: prompts.Staging, ActiveVersion: &v}
	is.Equal(prompts.NewIdempotencyRecord("rollback", in, at, a), prompts.IdempotencyRecord{Op: "rollback", Request: in.RequestDigest(), At: at,
		PromptID: "01P", VersionID: "01V", VersionNumber: 7, Environment: prompts.Staging})
	is.Equal(prompts.NewIdempotencyRecord("create_prompt", in, at, a.Prompt), prompts.IdempotencyRecord{Op: "create_prompt", Request: in.RequestDigest(), At: at, PromptID: "01P"})
}

// RecordKey tells every scope and key apart, however they split one text.
func TestIdempotencyRecordKey(t *testing.T) {
	is := is.New(t)
	ab := prompts.Idempotency{Scope: "a", Key: "bc"}
	is.Equal(ab.RecordKey(), prompts.Idempotency{Scope: "a", Key: "bc", Request: "another"}.RecordKey()) // the request is not part of it
	is.True(ab.RecordKey() != prompts.Idempotency{Scope: "ab", Key: "c"}.RecordKey())
	is.True(ab.RecordKey() != prompts.Idempotency{Scope: "", Key: "abc"}.RecordKey())
	is.True(ab.RequestDigest() != prompts.Idempotency{Request: "x"}.RequestDigest())
}

// Replay reads the result again, marked Replayed, for the same op and
// request only.
func TestReplay(t *testing.T) {
	is := is.New(t)
	in := prompts.Idempotency{Key: "k", Request: "req"}
	r := prompts.NewIdempotencyRecord("create_prompt", in, time.Now(), prompts.Prompt{ID: "01P"})
	read := func(r prompts.IdempotencyRecord) (prompts.Prompt, error) {
		return prompts.Prompt{ID: r.PromptID, Name: "as it is now"}, nil
	}
	p, err := prompts.Replay(r, "create_prompt", in, read)
	is.NoErr(err)
	is.Equal(p, prompts.Prompt{ID: "01P", Name: "as it is now", Replayed: true})

	_, err = prompts.Replay(r, "create_prompt", prompts.Idempotency{Key: "k", Request: "other"}, read)
	is.True(errors.Is(err, prompts.ErrIdempotencyKeyReused)) // another request
	_, err = prompts.Replay(r, "create_version", in, func(prompts.IdempotencyRecord) (prompts.PromptVersion, error) {
		t.Fatal("read for another op")
		return prompts.PromptVersion{}, nil
	})
	is.True(errors.Is(err, prompts.ErrIdempotencyKeyReused)) // another kind of write

	gone := prompts.NotFound("prompt")
	_, err = prompts.Replay(r, "create_prompt", in, func(prompts.IdempotencyRecord) (prompts.Prompt, error) { return prompts.Prompt{}, gone })
	is.Equal(err, gone) // a read that fails answers its error
}
