package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/promptkit/prompts"
)

// benchChat is a chat prompt of about the size of benchContent, with a
// system and a user message and one partial: what an application renders.
const benchChat = `{{role "system"}}
You are the support assistant of {{company}}. {{> support/tone}}
Ask one question that helps you understand the problem; never ask for
passwords, card numbers or other secrets. If the customer mentions an
order, ask for the order number and repeat it back before looking it up.
Keep every answer under 80 words. When you cannot help, say so and offer
a human agent: {{handoff_url}}. Sign off with the name {{agent_name}}.
{{role "user"}}
Hello, I am {{customer_name}}.`

// BenchmarkRenderPartialVsRead measures POST /prompts/{id}/render of a
// chat prompt with one partial (a dotprompt version with front matter:
// model, config and an input schema) against read 3 of a prompt of the
// same size, on one handler over memstore, in alternating rounds so that
// both see the same machine; it reports the median of the rounds' ratios
// as render/read. BENCHMARKS.md has the figures.
func BenchmarkRenderPartialVsRead(b *testing.B) {
	h, readID, chatID := benchRenderHandler(b)
	const key = "bench-key-0123456789abcdef0123456789abcdef"
	read := httptest.NewRequest("GET", "/v1/integration/prompts/"+readID, nil)
	read.Header.Set("X-API-Key", key)
	body := benchRenderBody
	renderURL := "/v1/integration/prompts/" + chatID + "/render"
	w := &discardWriter{}
	serve := func(r *http.Request) {
		w.header, w.status = http.Header{}, 0
		h.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatalf("%s %s: status %d", r.Method, r.URL.Path, w.status)
		}
	}
	reads := func(n int) time.Duration {
		start := time.Now()
		for range n {
			serve(read)
		}
		return time.Since(start)
	}
	renders := func(n int) time.Duration {
		start := time.Now()
		for range n {
			r := httptest.NewRequest("POST", renderURL, strings.NewReader(body))
			r.Header.Set("X-API-Key", key)
			r.Header.Set("Content-Type", "application/json")
			serve(r)
		}
		return time.Since(start)
	}
	// The render's request, made fresh each time, is part of what a
	// render costs here; a read's is made once. Measure what making it
	// costs alone, to take it out.
	making := func(n int) time.Duration {
		start := time.Now()
		for range n {
			r := httptest.NewRequest("POST", renderURL, strings.NewReader(body))
			r.Header.Set("X-API-Key", key)
			r.Header.Set("Content-Type", "application/json")
		}
		return time.Since(start)
	}
	reads(200)
	renders(200) // warm: the template parsed, the partial read once
	const round = 500
	var ratios []float64
	var renderTotal time.Duration
	var n int
	for b.Loop() {
		rd := reads(round)
		rn := renders(round) - making(round)
		ratios = append(ratios, float64(rn)/float64(rd))
		renderTotal += rn
		n += round
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "render/read")
	b.ReportMetric(float64(renderTotal.Nanoseconds())/float64(n), "ns/render")
}

// benchRenderBody is the body of the render the benchmarks send: the
// environment and the four variables.
const benchRenderBody = `{"environment":"production","variables":{"company":"Acme","handoff_url":"https://acme.example/help","agent_name":"Sam","customer_name":"Ada"}}`

// benchRenderHandler returns a handler over memstore with the prompt of
// read 3 and the chat prompt benchChat (a dotprompt version with front
// matter: model, config and an input schema) that includes the partial
// support/tone, both active in production, and the two prompts' ids.
func benchRenderHandler(b *testing.B) (h http.Handler, readID, chatID string) {
	ctx := context.Background()
	store, readID := benchStore(b)
	ap, err := store.GetActive(ctx, readID, prompts.Production)
	if err != nil {
		b.Fatal(err)
	}
	tone, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: ap.ProjectID, Key: "support/tone", Name: "Tone"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: tone.ID, TemplateFormat: prompts.FormatDotprompt,
		Content:      "Greet the customer by name, warmly and briefly, in the language of their last message.",
		Environments: []prompts.Environment{prompts.Production}}); err != nil {
		b.Fatal(err)
	}
	chat, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: ap.ProjectID, Key: "support/chat", Name: "Chat"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: chat.ID, TemplateFormat: prompts.FormatDotprompt,
		Content: benchChat,
		Metadata: `{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.2,"maxOutputTokens":512},` +
			`"input":{"schema":{"company":"string","handoff_url":"string","agent_name":"string","customer_name":"string"}}}`,
		Environments: []prompts.Environment{prompts.Production}}); err != nil {
		b.Fatal(err)
	}
	return benchHandler(b, store), readID, chat.ID
}

// BenchmarkRenderPartial is one render of BenchmarkRenderPartialVsRead's
// chat prompt through the whole handler: its ns/op and allocs/op are a
// render's. The request is made once; its body is rewound for each.
func BenchmarkRenderPartial(b *testing.B) {
	h, _, chatID := benchRenderHandler(b)
	body := strings.NewReader(benchRenderBody)
	r := httptest.NewRequest("POST", "/v1/integration/prompts/"+chatID+"/render", io.NopCloser(body))
	r.Header.Set("X-API-Key", "bench-key-0123456789abcdef0123456789abcdef")
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = int64(len(benchRenderBody))
	w := &discardWriter{}
	b.ReportAllocs()
	for b.Loop() {
		body.Reset(benchRenderBody)
		w.header, w.status = http.Header{}, 0
		h.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}
