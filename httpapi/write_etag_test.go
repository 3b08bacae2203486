package httpapi_test

import (
	"testing"

	"github.com/matryer/is"
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
