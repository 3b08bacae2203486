package mcp_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// What a session lists depends on its key: no shared cache may keep it.
func TestListIsPrivate(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.prompt(t, f.demo.ID, "greeting", "Hello", "", "", prompts.Production)
	cs := f.connect(t, readKey, "")
	code, body := post(t, f, cs.ID(), cs.InitializeResult().ProtocolVersion, `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`)
	is.Equal(code, 200)
	is.True(strings.Contains(body, `"demo/greeting"`))
	is.True(strings.Contains(body, `"cacheScope":"private"`)) // body
	is.True(!strings.Contains(body, `"public"`))
}
