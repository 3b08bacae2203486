package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/mcp"
	"github.com/promptkit/prompts/memstore"
)

const benchKey = "bench-key-0123456789abcdef"

// benchServer serves the HTTP interface at /v1/integration/ and MCP at
// /mcp, over a cache over memstore (as the standalone server with -dsn
// reads), with one prompt of about 700 bytes and two variables active in
// production, read once so that the cache holds it.
func benchServer(b *testing.B) (url, promptID string) {
	ctx := context.Background()
	ms := memstore.New()
	c := cache.New(ms)
	proj, err := c.CreateProject(ctx, prompts.NewProject{Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	p, err := c.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "Greeting"})
	if err != nil {
		b.Fatal(err)
	}
	content := "You are the support assistant of {{company}}. " + strings.Repeat("Answer briefly and politely. ", 22) + "The customer is {{name}}."
	if _, err := c.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, Environments: []prompts.Environment{prompts.Production}}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.GetActive(ctx, p.ID, prompts.Production); err != nil {
		b.Fatal(err)
	}
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "bench", Role: httpapi.RoleRead, Secret: benchKey}); err != nil {
		b.Fatal(err)
	}
	api := httpapi.New(c, httpapi.WithAuthenticator(keys))
	h := mcp.New(c, mcp.WithAuthenticator(keys))
	mux := http.NewServeMux()
	mux.Handle("/v1/integration/", api)
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	b.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return srv.URL, p.ID
}

// The benchmarks' requests: a render in production, and prompts/get of
// the same prompt with the same variables, as a JSON-RPC message and (by
// getParams) as the SDK's parameters.
const (
	renderBody = `{"environment":"production","variables":{"company":"Acme","name":"Ada"}}`
	getBody    = `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"bench/support/greeting","arguments":{"company":"Acme","name":"Ada"}}}`
)

func getParams() *sdk.GetPromptParams {
	return &sdk.GetPromptParams{Name: "bench/support/greeting", Arguments: map[string]string{"company": "Acme", "name": "Ada"}}
}

// benchSession connects the SDK's client to the MCP endpoint of the
// server at url with the bench key (without the standalone SSE stream if
// noSSE), closed when the benchmark ends.
func benchSession(b *testing.B, url string, noSSE bool) *sdk.ClientSession {
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: keyTransport{"X-API-Key", benchKey}}, DisableStandaloneSSE: noSSE}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchPost POSTs the JSON body to url with the bench key and the
// header's name-value pairs, and reads the answer and discards it; one
// that is not 200 fails b.
func benchPost(b *testing.B, client *http.Client, url, body string, header ...string) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("X-API-Key", benchKey)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatal(res.Status)
	}
}

// mcpHeader is the header of a JSON-RPC message POSTed in the session cs.
func mcpHeader(cs *sdk.ClientSession) []string {
	return []string{"Accept", "application/json, text/event-stream", "Mcp-Session-Id", cs.ID(), "Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion}
}

// BenchmarkGetPrompt is prompts/get of a cached prompt by the SDK's client
// over Streamable HTTP, one session, one request at a time.
func BenchmarkGetPrompt(b *testing.B) {
	url, _ := benchServer(b)
	ctx := context.Background()
	cs := benchSession(b, url, false)
	params := getParams()
	for b.Loop() {
		if _, err := cs.GetPrompt(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderHTTP is the same render over the HTTP interface (POST
// /v1/integration/prompts/{id}/render), one request at a time: what
// BenchmarkGetPrompt is measured against.
func BenchmarkRenderHTTP(b *testing.B) {
	url, id := benchServer(b)
	client := &http.Client{}
	for b.Loop() {
		benchPost(b, client, url+"/v1/integration/prompts/"+id+"/render", renderBody)
	}
}

// BenchmarkGetPromptRaw is BenchmarkGetPrompt with the client of
// BenchmarkRenderHTTP: each prompts/get a POST of its JSON-RPC message in
// an open session, its answer read and discarded, so that both measure the
// server's work and the same client's.
func BenchmarkGetPromptRaw(b *testing.B) {
	url, _ := benchServer(b)
	cs := benchSession(b, url, true)
	client := &http.Client{}
	for b.Loop() {
		benchPost(b, client, url+"/mcp", getBody, mcpHeader(cs)...)
	}
}

// BenchmarkGetPromptVsRender alternates, request by request, a render
// over the HTTP interface, the same prompts/get with that client, and the
// same prompts/get by the SDK's client, so that the three meet the same
// load (a shared machine's speed moves from one second to the next), and
// reports each one's mean time and the ratios of prompts/get to the render.
func BenchmarkGetPromptVsRender(b *testing.B) {
	url, id := benchServer(b)
	ctx := context.Background()
	cs := benchSession(b, url, false)
	client := &http.Client{}
	params := getParams()
	var tRender, tGet, tSDK time.Duration
	steps := []func() *time.Duration{
		func() *time.Duration {
			benchPost(b, client, url+"/v1/integration/prompts/"+id+"/render", renderBody)
			return &tRender
		},
		func() *time.Duration { benchPost(b, client, url+"/mcp", getBody, mcpHeader(cs)...); return &tGet },
		func() *time.Duration {
			if _, err := cs.GetPrompt(ctx, params); err != nil {
				b.Fatal(err)
			}
			return &tSDK
		},
	}
	n := 0
	for b.Loop() {
		for i := range steps { // each first in turn: no order favours one
			start := time.Now()
			t := steps[(n+i)%len(steps)]()
			*t += time.Since(start)
		}
		n++
	}
	b.ReportMetric(float64(tRender.Nanoseconds())/float64(n), "render-ns")
	b.ReportMetric(float64(tGet.Nanoseconds())/float64(n), "get-ns")
	b.ReportMetric(float64(tSDK.Nanoseconds())/float64(n), "sdk-get-ns")
	b.ReportMetric(float64(tGet)/float64(tRender), "get/render")
	b.ReportMetric(float64(tSDK)/float64(tRender), "sdk-get/render")
}
