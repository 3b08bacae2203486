package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// The prompt every target serves: a support agent's system prompt of
// about 700 bytes, with a description and model metadata, as an
// application would read it. The read-3 body is about 1.1 KB.
const (
	promptKey         = "support/greeting"
	promptName        = "Support greeting"
	promptDescription = "The first message of the support assistant."
	promptContent     = `You are the support assistant of {{company}}. Greet {{customer_name}} by name, ` +
		`warmly and briefly, in the language of their last message. Ask one question that helps ` +
		`you understand their problem; never ask for passwords, card numbers or other secrets. ` +
		`If the customer mentions an order, ask for the order number and repeat it back before ` +
		`looking it up. If they are upset, acknowledge it in one sentence before anything else. ` +
		`Keep every answer under 80 words, use plain language, no jargon, and no emoji unless the ` +
		`customer uses them first. When you cannot help, say so and offer a human agent: ` +
		`{{handoff_url}}. Sign off with the name {{agent_name}}.`
	promptMetadata = `{"model":"gpt-5","temperature":0.2,"max_tokens":512,"tags":["support","greeting"]}`
)

// readResponse is the read-3 response of a seeded server: what the bare
// server sends back, and what the other baselines must match.
type readResponse struct {
	Path         string `json:"path"` // /v1/integration/prompts/{id}
	Body         []byte `json:"body"`
	ContentType  string `json:"content_type"`
	ETag         string `json:"etag"`
	CacheControl string `json:"cache_control"`
}

var client = &http.Client{Timeout: 30 * time.Second}

// call sends a request with the API key and decodes a 200 JSON answer
// into out.
func call(ctx context.Context, method, url string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := api.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", apiKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, b)
	}
	return api.UnmarshalLenient(b, out)
}

// seed makes the prompt on the standalone server at base, over HTTP as a
// client would (the server creates a project when it starts on an empty
// store), and returns its read-3 response.
func seed(ctx context.Context, base string) (readResponse, error) {
	root := base + "/v1/integration"
	project, err := firstProject(ctx, root)
	if err != nil {
		return readResponse{}, err
	}
	var p api.Prompt
	if err := call(ctx, "POST", root+"/prompts", api.NewPrompt{
		ProjectID: project, Key: promptKey, Name: promptName, Description: api.Some(promptDescription),
	}, &p); err != nil {
		return readResponse{}, err
	}
	var v api.Version
	if err := call(ctx, "POST", root+"/prompts/"+p.ID+"/versions", api.NewVersion{
		Content: promptContent, ChangeSummary: api.Some("First version."), Metadata: api.Metadata(promptMetadata),
		Environments: []prompts.Environment{prompts.Production},
	}, &v); err != nil {
		return readResponse{}, err
	}
	path := "/v1/integration/prompts/" + p.ID
	r, err := get(ctx, base+path)
	if err != nil {
		return readResponse{}, err
	}
	r.Path = path
	return r, nil
}

// firstProject returns the id of the first project of the server whose
// API is at root (the server makes one when it starts on an empty store).
func firstProject(ctx context.Context, root string) (string, error) {
	var projects []api.Project
	if err := call(ctx, "GET", root+"/projects", nil, &projects); err != nil {
		return "", err
	}
	if len(projects) == 0 {
		return "", fmt.Errorf("GET /projects: no project")
	}
	return projects[0].ID, nil
}

// get reads a read-3 response.
func get(ctx context.Context, url string) (readResponse, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return readResponse{}, err
	}
	req.Header.Set("X-API-Key", apiKey)
	resp, err := client.Do(req)
	if err != nil {
		return readResponse{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return readResponse{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return readResponse{}, fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return readResponse{
		Body:         b,
		ContentType:  resp.Header.Get("Content-Type"),
		ETag:         resp.Header.Get("ETag"),
		CacheControl: resp.Header.Get("Cache-Control"),
	}, nil
}

// sameResponse checks that url answers exactly want: body and headers.
func sameResponse(ctx context.Context, url string, want readResponse) error {
	got, err := get(ctx, url)
	if err != nil {
		return err
	}
	switch {
	case !bytes.Equal(got.Body, want.Body):
		return fmt.Errorf("body differs from the standalone server's:\n%s\n%s", got.Body, want.Body)
	case got.ContentType != want.ContentType, got.ETag != want.ETag, got.CacheControl != want.CacheControl:
		return fmt.Errorf("headers differ from the standalone server's: %q %q %q, want %q %q %q",
			got.ContentType, got.ETag, got.CacheControl, want.ContentType, want.ETag, want.CacheControl)
	}
	return nil
}

// save writes r where a bare server can read it, and returns the file.
func (r readResponse) save(dir string) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	name := filepath.Join(dir, "read3.json")
	return name, os.WriteFile(name, b, 0o600)
}

// openUI asks the server at base for its web interface's first page, as
// a person opening it would.
func openUI(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/ui/", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("<html")) {
		return fmt.Errorf("GET %s/ui/: %s, not the sign-in page", base, resp.Status)
	}
	return nil
}

// The prompt the render target renders (-render): a chat prompt of about
// the size of the read-3 prompt, a dotprompt version with front matter
// (model, config and an input schema) and a system and a user message,
// which includes one partial; as httpapi's BenchmarkRenderPartialVsRead.
const (
	partialKey     = "support/tone"
	partialContent = "Greet the customer by name, warmly and briefly, in the language of their last message."
	chatKey        = "support/chat"
	chatContent    = `{{role "system"}}
You are the support assistant of {{company}}. {{> support/tone}}
Ask one question that helps you understand the problem; never ask for
passwords, card numbers or other secrets. If the customer mentions an
order, ask for the order number and repeat it back before looking it up.
Keep every answer under 80 words. When you cannot help, say so and offer
a human agent: {{handoff_url}}. Sign off with the name {{agent_name}}.
{{role "user"}}
Hello, I am {{customer_name}}.`
	chatMetadata = `{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.2,"maxOutputTokens":512},` +
		`"input":{"schema":{"company":"string","handoff_url":"string","agent_name":"string","customer_name":"string"}}}`
	// renderBody is the body of each render.
	renderBody = `{"environment":"production","variables":{"company":"Acme","handoff_url":"https://acme.example/help","agent_name":"Sam","customer_name":"Ada"}}`
)

// renderRequest is the render target's request: its path and body.
type renderRequest struct {
	Path string // /v1/integration/prompts/{id}/render
	Body string
}

// seedRender makes, on the seeded server at base, the partial and the chat
// prompt that includes it, both active in production, in the project of
// the read-3 prompt, and checks that a render answers 200 with the
// partial's text.
func seedRender(ctx context.Context, base string) (renderRequest, error) {
	root := base + "/v1/integration"
	project, err := firstProject(ctx, root)
	if err != nil {
		return renderRequest{}, err
	}
	var id string
	for _, p := range []struct{ key, content, metadata string }{
		{partialKey, partialContent, ""},
		{chatKey, chatContent, chatMetadata},
	} {
		var made api.Prompt
		if err := call(ctx, "POST", root+"/prompts", api.NewPrompt{ProjectID: project, Key: p.key, Name: p.key}, &made); err != nil {
			return renderRequest{}, err
		}
		nv := api.NewVersion{Content: p.content, TemplateFormat: api.Some(string(prompts.FormatDotprompt)),
			Environments: []prompts.Environment{prompts.Production}}
		if p.metadata != "" {
			nv.Metadata = api.Metadata(p.metadata)
		}
		var v api.Version
		if err := call(ctx, "POST", root+"/prompts/"+made.ID+"/versions", nv, &v); err != nil {
			return renderRequest{}, err
		}
		id = made.ID
	}
	rr := renderRequest{Path: "/v1/integration/prompts/" + id + "/render", Body: renderBody}
	var out api.Rendered
	if err := call(ctx, "POST", base+rr.Path, jsontext.Value(rr.Body), &out); err != nil {
		return renderRequest{}, err
	}
	if !strings.Contains(out.Text, partialContent) {
		return renderRequest{}, fmt.Errorf("POST %s: the text does not include the partial's: %q", rr.Path, out.Text)
	}
	return rr, nil
}

// script writes the wrk Lua script that sends rr's POST into dir, named
// after the target, and returns the file.
func (rr renderRequest) script(dir, target string) (string, error) {
	lua := "wrk.method = \"POST\"\n" +
		"wrk.headers[\"Content-Type\"] = \"application/json\"\n" +
		"wrk.body = " + luaString(rr.Body) + "\n"
	name := filepath.Join(dir, target+".lua")
	return name, os.WriteFile(name, []byte(lua), 0o600)
}

// luaString quotes s as a Lua string literal: every byte that is not a
// printable ASCII character, a quote or a backslash as a decimal escape.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			fmt.Fprintf(&b, "\\%03d", c)
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// The split the subject targets read (-subject): a second prompt of the
// read-3 prompt's shape, with two versions of the same size in a split
// of 50 and 50 in production, so that every subject's answer is as large
// as the answer without one.
const (
	splitKey = "support/greeting-split"
	// splitSubjects is how many subjects the subject target cycles
	// through: many, as an application's users are, so that no answer
	// repeats on a connection.
	splitSubjects = 100000
)

// splitRequest is what the subject targets read: the path of read 3 of
// the split's prompt, and its id.
type splitRequest struct {
	Path     string // /v1/integration/prompts/{id}
	PromptID string
	Split    prompts.Split
}

// seedSplit makes, on the seeded server at base, the split's prompt with
// its two versions and the split in production, and checks that a read
// with a subject answers the version the published formula picks for it
// (prompts.Split.Entry), for the first 64 subjects of the script's.
func seedSplit(ctx context.Context, base string) (splitRequest, error) {
	root := base + "/v1/integration"
	project, err := firstProject(ctx, root)
	if err != nil {
		return splitRequest{}, err
	}
	var p api.Prompt
	if err := call(ctx, "POST", root+"/prompts", api.NewPrompt{
		ProjectID: project, Key: splitKey, Name: promptName, Description: api.Some(promptDescription),
	}, &p); err != nil {
		return splitRequest{}, err
	}
	for _, summary := range []string{"Version A.", "Version B."} {
		var v api.Version
		if err := call(ctx, "POST", root+"/prompts/"+p.ID+"/versions", api.NewVersion{
			Content: promptContent, ChangeSummary: api.Some(summary), Metadata: api.Metadata(promptMetadata),
		}, &v); err != nil {
			return splitRequest{}, err
		}
	}
	var dep api.Deployment
	if err := call(ctx, "PUT", root+"/prompts/"+p.ID+"/environments/production", api.Activation{
		Split: api.SplitRequest{{VersionNumber: 1, Weight: 50}, {VersionNumber: 2, Weight: 50}},
	}, &dep); err != nil {
		return splitRequest{}, err
	}
	sr := splitRequest{Path: "/v1/integration/prompts/" + p.ID, PromptID: p.ID,
		Split: prompts.Split{{VersionNumber: 1, Weight: 50}, {VersionNumber: 2, Weight: 50}}}
	seen := map[int]bool{}
	for i := 1; i <= 64; i++ {
		subject := subjectName(i)
		var got api.ActivePrompt
		if err := call(ctx, "GET", base+sr.Path+"?subject="+subject, nil, &got); err != nil {
			return splitRequest{}, err
		}
		want := sr.Split[sr.Split.Entry(p.ID, prompts.Production, subject)].VersionNumber
		if got.ActiveVersion == nil || got.ActiveVersion.VersionNumber != want {
			return splitRequest{}, fmt.Errorf("GET %s?subject=%s: not version %d, which the formula picks", sr.Path, subject, want)
		}
		seen[want] = true
	}
	if len(seen) != 2 {
		return splitRequest{}, fmt.Errorf("GET %s: 64 subjects all read one version", sr.Path)
	}
	return sr, nil
}

// subjectName is the script's subject number i.
func subjectName(i int) string { return "user-" + strconv.Itoa(i) }

// script writes the wrk Lua script of the split's reads into dir, named
// after the target, and returns the file: with subjects, each request
// names the next of splitSubjects subjects in turn (as subjectName
// does); without, each request is the same read of the split. Both make
// the request in the script, so that wrk does the same work for each.
func (sr splitRequest) script(dir, target string, subjects bool) (string, error) {
	lua := "local path = " + luaString(sr.Path) + "\n"
	if subjects {
		lua += "local n = 0\n" +
			"request = function()\n" +
			"  n = n % " + strconv.Itoa(splitSubjects) + " + 1\n" +
			"  return wrk.format(\"GET\", path .. \"?subject=user-\" .. n)\n" +
			"end\n"
	} else {
		lua += "request = function()\n" +
			"  return wrk.format(\"GET\", path)\n" +
			"end\n"
	}
	name := filepath.Join(dir, target+".lua")
	return name, os.WriteFile(name, []byte(lua), 0o600)
}
