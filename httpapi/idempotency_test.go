package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestIdempotencyKey(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	create := `{"project_id":"` + e.project.ID + `","key":"idem","name":"Idem"}`
	first := e.do("POST", "/v1/integration/prompts", create, "Idempotency-Key", "create-1")
	is.Equal(first.status, 200)
	is.Equal(first.header.Get("Idempotent-Replayed"), "")    // the first is no replay
	for _, key := range []string{"create-1", `"create-1"`} { // the quoted form is the same key
		again := e.do("POST", "/v1/integration/prompts", create, "Idempotency-Key", key)
		is.Equal(again.status, 200) // not 409: a replay
		is.Equal(again.header.Get("Idempotent-Replayed"), "true")
		is.Equal(again.header.Get("Location"), first.header.Get("Location"))
		is.Equal(string(again.body), string(first.body)) // the same prompt
	}
	id := first.obj(t)["id"].(string)

	// The same key with another body: 422, nothing written.
	r := e.do("POST", "/v1/integration/prompts", strings.Replace(create, `"idem"`, `"other"`, 1), "Idempotency-Key", "create-1")
	is.Equal(r.status, 422)
	is.Equal(r.problem(t)["code"], "idempotency_key_reused")
	is.Equal(e.do("GET", "/v1/integration/prompts?key=other&project_id="+e.project.ID, "").arr(t), []map[string]any{})

	// Another API key's name is another scope: its write is its own.
	r = e.call(e.ownKey, "POST", "/v1/integration/prompts", strings.Replace(create, `"idem"`, `"own"`, 1), "Idempotency-Key", "create-1")
	is.Equal(r.status, 200)
	is.Equal(r.header.Get("Idempotent-Replayed"), "")

	// A version: one, however often the request is repeated.
	versions := "/v1/integration/prompts/" + id + "/versions"
	for i := range 3 {
		r = e.do("POST", versions, `{"content":"one","environments":["production"]}`, "Idempotency-Key", "v-1")
		is.Equal(r.status, 200)
		is.Equal(r.header.Get("Location"), "versions/1")
		is.Equal(r.header.Get("Idempotent-Replayed") == "true", i > 0)
	}
	e.newVersion(id, `{"content":"two","environments":["production"]}`)
	is.Equal(len(e.do("GET", versions, "").arr(t)), 2)

	// A rollback: once, however often the request is repeated.
	rollback := "/v1/integration/prompts/" + id + "/environments/production/rollback"
	for i := range 3 {
		r = e.do("POST", rollback, `{"reason":"bad"}`, "Idempotency-Key", "undo-1")
		is.Equal(r.status, 200)
		is.Equal(fmt.Sprint(r.obj(t)["active_version"].(map[string]any)["version_number"]), "1") // not back to 2
		is.Equal(r.header.Get("Idempotent-Replayed") == "true", i > 0)
	}
	is.Equal(len(e.do("GET", "/v1/integration/prompts/"+id+"/deployments", "").arr(t)), 3) // two activations, one rollback

	// A key that is not one: 400 naming the header, nothing written.
	for _, bad := range []string{`""`, strings.Repeat("k", 256), "caf\u00e9", "tab\there"} {
		r = e.do("POST", versions, `{"content":"three"}`, "Idempotency-Key", bad)
		is.Equal(r.status, 400)
		is.True(strings.Contains(string(r.body), `"field":"Idempotency-Key"`))
	}
	r = e.do("POST", versions, `{"content":"three"}`, "Idempotency-Key", strings.Repeat("k", 255)) // the longest
	is.Equal(r.status, 200)
	is.Equal(len(e.do("GET", versions, "").arr(t)), 3)
}

// A replay answers as the first success did (status, Location,
// Idempotent-Replayed), with the resource read again by its id: a prompt
// renamed since under its new name, the version as it was made, the
// environment of a rollback as a read of it answers now, ETag included.
func TestIdempotencyReplayReadsTheResourceAgain(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	create := `{"project_id":"` + e.project.ID + `","key":"again","name":"Again"}`
	first := e.do("POST", "/v1/integration/prompts", create, "Idempotency-Key", "create")
	is.Equal(first.status, 200)
	id := first.obj(t)["id"].(string)
	renamed := e.do("PATCH", "/v1/integration/prompts/"+id, `{"name":"Renamed"}`)
	is.Equal(renamed.status, 200)
	r := e.do("POST", "/v1/integration/prompts", create, "Idempotency-Key", "create")
	is.Equal(r.status, 200)
	is.Equal(r.header.Get("Idempotent-Replayed"), "true")
	is.Equal(r.header.Get("Location"), first.header.Get("Location"))
	is.Equal(string(r.body), string(renamed.body)) // the same prompt, as it is now

	versions := "/v1/integration/prompts/" + id + "/versions"
	v1 := e.do("POST", versions, `{"content":"one","environments":["production"]}`, "Idempotency-Key", "v1")
	is.Equal(v1.status, 200)
	e.newVersion(id, `{"content":"two","environments":["production"]}`) // the latest moves on
	r = e.do("POST", versions, `{"content":"one","environments":["production"]}`, "Idempotency-Key", "v1")
	is.Equal(r.status, 200)
	is.Equal(r.header.Get("Idempotent-Replayed"), "true")
	is.Equal(r.header.Get("Location"), "versions/1")
	is.Equal(string(r.body), string(v1.body)) // a version never changes

	env := "/v1/integration/prompts/" + id + "/environments/production"
	rollback := e.do("POST", env+"/rollback", `{}`, "Idempotency-Key", "undo")
	is.Equal(rollback.status, 200)
	is.Equal(e.do("PUT", env, `{"version_number":2}`).status, 200) // production moves on again
	r = e.do("POST", env+"/rollback", `{}`, "Idempotency-Key", "undo")
	is.Equal(r.status, 200)
	is.Equal(r.header.Get("Idempotent-Replayed"), "true")
	now := e.do("GET", env, "")
	is.Equal(now.status, 200)
	is.Equal(string(r.body), string(now.body))             // the environment as a read answers it now
	is.Equal(r.header.Get("ETag"), now.header.Get("ETag")) // with its ETag, for the next If-Match
	is.Equal(fmt.Sprint(r.obj(t)["active_version"].(map[string]any)["version_number"]), "2")
	is.Equal(len(e.do("GET", "/v1/integration/prompts/"+id+"/deployments", "").arr(t)), 4) // rolled back once
}
