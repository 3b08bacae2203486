package httpapi_test

import (
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// A revoked key's open event streams end, whether it is revoked through
// the interface or past it (another process on the same data); other
// keys' streams go on.
func TestStreamOfARevokedKeyEnds(t *testing.T) {
	for _, here := range []bool{true, false} {
		t.Run(map[bool]string{true: "revoked here", false: "revoked elsewhere"}[here], func(t *testing.T) {
			is := is.New(t)
			e, sk, _ := keysEnv(t)
			needEvents(t, e.store)
			watch(t, e, sk)
			k := e.do("POST", "/v1/integration/keys", `{"name":"leaving","role":"read"}`).obj(t)
			secret, id := k["secret"].(string), k["id"].(string)
			_, gone := e.openStream(t, secret, "")
			_, kept := e.openStream(t, e.key, "")
			e.newPrompt(e.project.ID)
			is.Equal(gone.event().event, "prompt.created") // it streams
			is.Equal(kept.event().event, "prompt.created")

			if here {
				is.Equal(e.do("DELETE", "/v1/integration/keys/"+id, "").status, 204)
			} else {
				ks, _ := prompts.KeyStoreOf(e.store)
				_, err := ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: id, Revoker: prompts.Grant{Role: prompts.KeyAdmin}})
				is.NoErr(err)
			}
			is.Equal(kept.event().event, "key.revoked")
			p := e.newPrompt(e.project.ID)
			is.True(gone.ended(5 * time.Second))
			for f := range gone.frames {
				is.True(f.id == "" || f.event == "key.revoked") // nothing after its revocation
			}
			f := kept.event() // the other key's stream goes on
			is.Equal(f.event, "prompt.created")
			is.Equal(f.decode(t)["prompt_id"], p["id"])
			r, _ := e.openStream(t, secret, "")
			is.Equal(r.status, 401)
		})
	}
}

// A kept key's open event streams end when it expires.
func TestStreamOfAnExpiredKeyEnds(t *testing.T) {
	is := is.New(t)
	e, _, _ := keysEnv(t)
	needEvents(t, e.store)
	at := time.Now().Add(3 * time.Second)
	k := e.do("POST", "/v1/integration/keys", `{"name":"brief","role":"read","expires_at":"`+at.UTC().Format(time.RFC3339Nano)+`"}`).obj(t)
	_, s := e.openStream(t, k["secret"].(string), "")
	_, kept := e.openStream(t, e.key, "")
	is.True(s.ended(10 * time.Second))
	is.True(!time.Now().Before(at)) // not before its expiry
	is.True(!kept.ended(0))
}
