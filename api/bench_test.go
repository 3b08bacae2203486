package api_test

import (
	"strings"
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// BenchmarkAppendActive encodes read 3's body, 1.1 KB, with the hand
// encoder, as the server does when its answer is not cached yet: the
// conversion and the JSON. BenchmarkMarshalActive is the same body by
// the library, the baseline that keeps the hand encoder (BENCHMARKS.md,
// "The JSON of read 3").
func BenchmarkAppendActive(b *testing.B) { benchActive(b, 1, appendActive) }

// BenchmarkAppendActiveLarge encodes a 40 KB body, beyond what the
// server keeps of encoded answers: what each such read costs.
func BenchmarkAppendActiveLarge(b *testing.B) { benchActive(b, 50, appendActive) }

// BenchmarkMarshalActive is BenchmarkAppendActive by api.Append.
func BenchmarkMarshalActive(b *testing.B) { benchActive(b, 1, marshalActive) }

// BenchmarkMarshalActiveLarge is BenchmarkAppendActiveLarge by api.Append.
func BenchmarkMarshalActiveLarge(b *testing.B) { benchActive(b, 50, marshalActive) }

func appendActive(buf []byte, a prompts.ActivePrompt) ([]byte, error) {
	return api.AppendActive(buf, a), nil
}

func marshalActive(buf []byte, a prompts.ActivePrompt) ([]byte, error) {
	return api.Append(buf, api.FromActive(a))
}

func benchActive(b *testing.B, times int, encode func([]byte, prompts.ActivePrompt) ([]byte, error)) {
	a := sample()
	a.ActiveVersion.Content = strings.Repeat(a.ActiveVersion.Content, times)
	buf := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = encode(buf[:0], a); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// renderBody is the body of the render of httpapi's
// BenchmarkRenderPartial: an environment and four variables.
const renderBody = `{"environment":"production","variables":{"company":"Acme","handoff_url":"https://acme.example/help","agent_name":"Sam","customer_name":"Ada"}}`

// BenchmarkDecodeRender decodes a render's request body as the server
// does (BENCHMARKS.md, "Render over HTTP").
func BenchmarkDecodeRender(b *testing.B) {
	body := []byte(renderBody)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var req api.Render
		if bad := api.DecodeRequest(body, &req); bad != nil {
			b.Fatal(bad)
		}
	}
}

// BenchmarkAppendRendered writes a render's answer: the chat prompt of
// BenchmarkRenderPartial, two messages.
func BenchmarkAppendRendered(b *testing.B) {
	v := prompts.PromptVersion{PromptID: "01M85NS1EWN2SE8Y96FARND8ZV", ID: "01M85NS1EWN2SE8Y96FARND8ZW", VersionNumber: 1,
		TemplateFormat: prompts.FormatDotprompt}
	sys := strings.Repeat("You are the support assistant of Acme. Keep every answer short.\n", 8) // lines, as a template's
	out := prompts.Rendered{
		Messages: []prompts.Message{{Role: "system", Content: []prompts.Part{{Text: sys}}},
			{Role: "user", Content: []prompts.Part{{Text: "Hello, I am Ada."}}}},
		Text: sys + "Hello, I am Ada.", Model: "googleai/gemini-2.5-flash", Config: `{"temperature":0.2,"maxOutputTokens":512}`,
	}
	buf := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	for b.Loop() {
		buf = api.AppendRendered(buf[:0], v, out)
	}
	b.SetBytes(int64(len(buf)))
}
