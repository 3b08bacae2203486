package httpapi_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// The answers to a create and an update of a prompt carry the ETag that a
// read of it sends right after, so that a client knows the revision its
// write made; an update that changes nothing keeps it.
func TestPromptWritesSendTheReadsETag(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	created := e.do("POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"k","name":"N"}`)
	is.Equal(created.status, 200)
	id := created.obj(t)["id"].(string)
	tag := func() string { return e.do("GET", "/v1/integration/prompts/"+id, "").header.Get("ETag") }
	is.True(created.header.Get("ETag") != "")   // the create sends one
	is.Equal(created.header.Get("ETag"), tag()) // the read's

	updated := e.do("PATCH", "/v1/integration/prompts/"+id, `{"name":"Renamed"}`)
	is.Equal(updated.status, 200)
	is.True(updated.header.Get("ETag") != created.header.Get("ETag")) // the update moved it on
	is.Equal(updated.header.Get("ETag"), tag())                       // to the read's

	same := e.do("PATCH", "/v1/integration/prompts/"+id, `{}`)
	is.Equal(same.header.Get("ETag"), updated.header.Get("ETag")) // nothing changed, nor the tag

	bad := e.do("PATCH", "/v1/integration/prompts/"+id, `{"name":null}`)
	is.Equal(bad.status, 400)
	is.Equal(bad.header.Get("ETag"), "") // a problem has none
}

// When production holds a split, read 3 there sends a tag naming the
// version it serves (…-v1): the answers to an update and to a repeated
// create send that same tag, so that If-None-Match with it is 304.
func TestPromptWritesSendTheReadsETagOfASplit(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	f := newSplitFixture(t, e)
	is.Equal(e.do("PUT", f.envPath("production"), `{"split":[{"version_number":2,"weight":50},{"version_number":1,"weight":50}]}`).status, 200)
	read := "/v1/integration/prompts/" + f.id + "?environment=production"

	updated := e.do("PATCH", "/v1/integration/prompts/"+f.id, `{"name":"Renamed"}`)
	is.Equal(updated.status, 200)
	tag := updated.header.Get("ETag")
	is.True(strings.HasSuffix(tag, `-v2"`)) // names the version read 3 serves without a subject
	is.Equal(e.do("GET", read, "", "If-None-Match", tag).status, 304)

	body := `{"project_id":"` + e.project.ID + `","key":"repeated","name":"N"}`
	created := e.do("POST", "/v1/integration/prompts", body, "Idempotency-Key", "create-once")
	is.Equal(created.status, 200)
	id := created.obj(t)["id"].(string)
	f2 := splitFixture{env: e, id: id}
	for _, c := range []string{"one", "two"} {
		e.newVersion(id, `{"content":"`+c+`"}`)
	}
	is.Equal(e.do("PUT", f2.envPath("production"), `{"split":[{"version_number":1,"weight":1},{"version_number":2,"weight":1}]}`).status, 200)
	again := e.do("POST", "/v1/integration/prompts", body, "Idempotency-Key", "create-once")
	is.Equal(again.header.Get("Idempotent-Replayed"), "true")
	is.True(strings.HasSuffix(again.header.Get("ETag"), `-v1"`)) // the prompt as it is now: its split's first entry
	is.Equal(e.do("GET", "/v1/integration/prompts/"+id, "", "If-None-Match", again.header.Get("ETag")).status, 304)
}

// An update whose prompt another change moved on before production could
// be read sends the tag of its own revision, without a version: a client
// still learns the revision its write made.
func TestPromptUpdateRacedSendsTheRevisionsTag(t *testing.T) {
	is := is.New(t)
	e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store { return racingStore{s} }})
	f := newSplitFixture(t, e)
	updated := e.do("PATCH", "/v1/integration/prompts/"+f.id, `{"name":"Renamed"}`)
	is.Equal(updated.status, 200)
	is.Equal(updated.obj(t)["name"], "Renamed")
	tag := updated.header.Get("ETag")
	is.True(tag != "" && !strings.Contains(tag, "-v")) // production is at a later revision than the update's: the update's own, without a version
	revision := func(tag string) int64 {               // "FORM-ID-production-REVISION[-vN]"
		f := strings.Split(strings.Trim(tag, `"`), "-")
		n, err := strconv.ParseInt(f[3], 10, 64)
		is.NoErr(err)
		return n
	}
	now := e.do("GET", "/v1/integration/prompts/"+f.id, "").header.Get("ETag")
	is.True(revision(now) > revision(tag)) // the read is at the later one
}

// racingStore activates version 1 in production right after every update
// of a prompt: another change between the update and any read.
type racingStore struct{ prompts.Store }

func (s racingStore) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (prompts.Prompt, error) {
	p, err := s.Store.UpdatePrompt(ctx, id, in)
	if err != nil {
		return p, err
	}
	_, err = s.Store.Activate(ctx, prompts.Activation{PromptID: id, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
	return p, err
}
