package interop_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// What client.mjs answers, as far as the tests read it. Every answer has
// passed the TypeScript SDK's own checks first: its schemas of MCP's
// results, and each tool's output schema (from tools/list) for the
// tool's structured content.
type (
	connected struct {
		ProtocolVersion string `json:"protocolVersion"`
		SessionID       bool   `json:"sessionId"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Capabilities struct {
			Prompts *struct {
				ListChanged bool `json:"listChanged"`
			} `json:"prompts"`
			Tools *struct{} `json:"tools"`
		} `json:"capabilities"`
	}
	promptList struct {
		Prompts []struct {
			Name        string     `json:"name"`
			Description string     `json:"description"`
			Arguments   []argument `json:"arguments"`
		} `json:"prompts"`
	}
	argument struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Required    bool   `json:"required"`
	}
	gotPrompt struct {
		Meta     map[string]any `json:"_meta"`
		Messages []struct {
			Role    string         `json:"role"`
			Content map[string]any `json:"content"`
		} `json:"messages"`
	}
	toolList struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	toolResult struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	}
	closed struct {
		TransportErrors []stepError `json:"transportErrors"`
	}
)

// protocolVersion is the latest version of MCP that the TypeScript SDK
// (1.32) speaks, and offers first: the Go SDK speaks it too.
const protocolVersion = "2025-11-25"

// The TypeScript SDK's client over Streamable HTTP: a session with either
// header, the prompts with their arguments and messages, the tools with
// their output schemas, a tool refused to a read key, list_changed on
// its stream after a promotion through the HTTP interface, and 401
// without a valid key.
func TestTypeScriptClientOverHTTP(t *testing.T) {
	need(t)
	is := is.New(t)
	t.Logf("@modelcontextprotocol/sdk %s", sdkVer)
	s := startServer(t)
	greeting := s.seed(t, "support/greeting", "greets", map[string]any{"content": "Hello {{name}}, welcome to {{place}}."}, "production")
	s.seed(t, "count", "", map[string]any{
		"template_format": "dotprompt",
		"content":         `{{role "system"}}You count.{{role "user"}}Count to {{n}}. {{media url=img}}{{role "model"}}Sure.`,
		"metadata_":       map[string]any{"input": map[string]any{"schema": map[string]any{"n": "integer", "img": "string, an image as a data: URL"}}},
	}, "production")
	farewell := s.seed(t, "farewell", "", map[string]any{"content": "Bye {{name}}."}, "staging")
	endpoint := s.origin + "/mcp"

	// Without a key, or with one the server does not know: 401 to
	// initialize.
	for _, header := range [][]string{nil, {"X-API-Key: not-a-key-of-this-server"}} {
		c := startClient(t, nil, append([]string{"http", endpoint}, header...)...)
		err := c.fails(t, "connect", nil)
		is.Equal(err.Name, "StreamableHTTPError")
		is.Equal(err.Code, 401)
	}

	// X-API-Key opens a session as Authorization: Bearer does.
	c := startClient(t, nil, "http", endpoint, "X-API-Key: "+s.readKey)
	var hello connected
	c.result(t, "connect", nil, &hello)
	is.Equal(hello.ProtocolVersion, protocolVersion)
	var list promptList
	c.result(t, "listPrompts", nil, &list)
	is.Equal(len(list.Prompts), 2)
	c.result(t, "close", nil, &closed{})

	c = startClient(t, nil, "http", endpoint, "Authorization: Bearer "+s.readKey)
	c.result(t, "connect", nil, &hello)
	is.Equal(hello.ProtocolVersion, protocolVersion) // agreed
	is.True(hello.SessionID)                         // Mcp-Session-Id, sent back with every request
	is.Equal(hello.ServerInfo.Name, "prompts")
	is.True(hello.Capabilities.Prompts != nil && hello.Capabilities.Prompts.ListChanged)
	is.True(hello.Capabilities.Tools != nil)

	// prompts/list: SLUG/KEY, description and arguments; the prompt
	// active in staging only is not listed.
	c.result(t, "listPrompts", nil, &list)
	is.Equal(len(list.Prompts), 2)
	is.Equal(list.Prompts[0].Name, "demo/count")
	is.Equal(list.Prompts[0].Arguments, []argument{{Name: "img", Description: "an image as a data: URL", Required: true}, {Name: "n", Required: true}})
	is.Equal(list.Prompts[1].Name, "demo/support/greeting")
	is.Equal(list.Prompts[1].Description, "greets")
	is.Equal(list.Prompts[1].Arguments, []argument{{Name: "name", Required: true}, {Name: "place", Required: true}})

	// prompts/get: the messages, and what was rendered in _meta.
	var got gotPrompt
	c.result(t, "getPrompt", map[string]any{"name": "demo/support/greeting", "arguments": map[string]string{"name": "Ada", "place": "Paris"}}, &got)
	is.Equal(len(got.Messages), 1)
	is.Equal(got.Messages[0].Role, "user")
	is.Equal(got.Messages[0].Content, map[string]any{"type": "text", "text": "Hello Ada, welcome to Paris."})
	is.Equal(got.Meta["prompt_id"], greeting)
	is.Equal(got.Meta["version_number"], 1.0)
	is.Equal(got.Meta["environment"], "production")
	is.True(got.Meta["version_id"] != nil)

	// A dotprompt version's roles and media: system is a user message,
	// model an assistant one, a data: URL of an image an image content.
	c.result(t, "getPrompt", map[string]any{"name": "demo/count", "arguments": map[string]string{"n": "3", "img": "data:image/png;base64,iVBORw0KGgo="}}, &got)
	var roles []string
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
	}
	is.Equal(roles, []string{"user", "user", "user", "assistant"})
	is.Equal(got.Messages[1].Content, map[string]any{"type": "text", "text": "Count to 3. "})
	is.Equal(got.Messages[2].Content, map[string]any{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})

	// An argument missing is invalid params, and the session goes on.
	err := c.fails(t, "getPrompt", map[string]any{"name": "demo/support/greeting", "arguments": map[string]string{"name": "Ada"}})
	is.Equal(err.Code, -32602)
	is.True(strings.Contains(err.Message, "place"))

	// tools/list: the five tools. The client keeps their output schemas
	// and checks the answers below against them.
	var tools toolList
	c.result(t, "listTools", nil, &tools)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	is.Equal(names, []string{"activate_version", "create_version", "get_prompt", "list_prompts", "render_prompt"})

	var res toolResult
	c.result(t, "callTool", map[string]any{"name": "get_prompt", "arguments": map[string]any{"key": "demo/support/greeting"}}, &res)
	is.True(!res.IsError)
	is.Equal(res.StructuredContent["content"], "Hello {{name}}, welcome to {{place}}.")
	is.Equal(res.StructuredContent["version_number"], 1.0)
	is.Equal(res.StructuredContent["metadata_"], nil)

	res = toolResult{}
	c.result(t, "callTool", map[string]any{"name": "render_prompt", "arguments": map[string]any{
		"key": "demo/support/greeting", "variables": map[string]any{"name": "Bo", "place": "Rome"}}}, &res)
	is.True(!res.IsError)
	is.Equal(res.StructuredContent["text"], "Hello Bo, welcome to Rome.")

	// A read key may not activate: a tool error naming the role needed,
	// and nothing changed.
	res = toolResult{}
	c.result(t, "callTool", map[string]any{"name": "activate_version", "arguments": map[string]any{
		"key": "demo/farewell", "environment": "production", "version_number": 1}}, &res)
	is.True(res.IsError)
	is.Equal(len(res.Content), 1)
	is.True(strings.Contains(res.Content[0].Text, "deploy role"))
	is.Equal(s.active(t, farewell, "production"), 0)

	// A promotion through the HTTP interface reaches the session as
	// notifications/prompts/list_changed, on the stream the client opened
	// (GET); listed again, the prompt is there.
	s.api(t, "PUT", "/prompts/"+farewell+"/environments/production", map[string]any{"version_number": 1}, nil)
	var changed struct{ Count int }
	c.result(t, "listChanged", nil, &changed)
	is.True(changed.Count >= 1)
	c.result(t, "listPrompts", nil, &list)
	is.Equal(len(list.Prompts), 3)
	is.Equal(list.Prompts[1].Name, "demo/farewell")

	// The session ends with DELETE; the transport saw no error all along
	// (an answer or a stream it could not read would be one).
	var end closed
	c.result(t, "close", nil, &end)
	is.Equal(end.TransportErrors, []stepError{})
}

// The TypeScript SDK's client over stdio: it starts `prompts mcp`, which
// reads the running server with a read key, and lists and gets a prompt
// of the command's environment.
func TestTypeScriptClientOverStdio(t *testing.T) {
	need(t)
	is := is.New(t)
	s := startServer(t)
	greeting := s.seed(t, "support/greeting", "greets", map[string]any{"content": "Hello {{name}}."}, "staging")

	c := startClient(t, []string{"PROMPTS_URL=" + s.origin, "PROMPTS_API_KEY=" + s.readKey},
		"stdio", cliBin, "mcp", "-project", "demo", "-environment", "staging")
	var hello connected
	c.result(t, "connect", nil, &hello)
	is.Equal(hello.ProtocolVersion, protocolVersion)
	is.True(!hello.SessionID) // none over stdio
	is.True(hello.Capabilities.Prompts != nil && hello.Capabilities.Prompts.ListChanged)

	var list promptList
	c.result(t, "listPrompts", nil, &list)
	is.Equal(len(list.Prompts), 1)
	is.Equal(list.Prompts[0].Name, "demo/support/greeting")
	is.Equal(list.Prompts[0].Arguments, []argument{{Name: "name", Required: true}})

	var got gotPrompt
	c.result(t, "getPrompt", map[string]any{"name": "demo/support/greeting", "arguments": map[string]string{"name": "Ada"}}, &got)
	is.Equal(len(got.Messages), 1)
	is.Equal(got.Messages[0].Content, map[string]any{"type": "text", "text": "Hello Ada."})
	is.Equal(got.Meta["prompt_id"], greeting)
	is.Equal(got.Meta["environment"], "staging")

	var end closed
	c.result(t, "close", nil, &end)
	is.Equal(end.TransportErrors, []stepError{})
}
