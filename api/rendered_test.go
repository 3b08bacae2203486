package api_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// checkRendered checks that AppendRendered writes what Marshal writes of
// FromRendered, byte for byte, after a prefix it keeps.
func checkRendered(t *testing.T, v prompts.PromptVersion, r prompts.Rendered) {
	t.Helper()
	want, err := api.Marshal(api.FromRendered(v, r))
	if err != nil {
		t.Fatal(err)
	}
	got := api.AppendRendered([]byte("x"), v, r)
	if string(got) != "x"+string(want) {
		t.Fatalf("AppendRendered:\n%s\nMarshal:\n%s", got[1:], want)
	}
}

func sampleRendered() (prompts.PromptVersion, prompts.Rendered) {
	v := prompts.PromptVersion{ID: "01KAKM6N8V5X3ZJ0W2Q9R7T4YB", PromptID: "01KAKM6N8V5X3ZJ0W2Q9R7T4YC", VersionNumber: 12,
		TemplateFormat: prompts.FormatDotprompt}
	r := prompts.Rendered{
		Messages: []prompts.Message{
			{Role: "system", Content: []prompts.Part{{Text: "You are the support assistant of Acme."}}},
			{Role: "user", Content: []prompts.Part{{Text: "Hello"}, {Media: &prompts.Media{URL: "https://a.example/x.png", ContentType: "image/png"}},
				{Media: &prompts.Media{URL: "data:,x"}}, {Text: ""}}},
		},
		Text:   "You are the support assistant of Acme.Hello",
		Model:  "googleai/gemini-2.5-flash",
		Config: `{"temperature":0.2,"maxOutputTokens":512}`,
		Output: `{"format":"json","schema":{"a":"\u00e9<>&","n":1.50e+10}}`,
	}
	return v, r
}

func TestAppendRenderedAsMarshal(t *testing.T) {
	v, r := sampleRendered()
	checkRendered(t, v, r)
	v.TemplateFormat = "" // plain
	r.Model, r.Config, r.Output = "", "", ""
	checkRendered(t, v, r) // the nulls
	r.Messages = nil
	checkRendered(t, v, r) // no messages
	r.Messages = []prompts.Message{{Role: "user"}}
	checkRendered(t, v, r) // a message without parts
	for _, s := range stringCases {
		// Every alignment of the special characters to 8-byte words.
		for pad := range 9 {
			v, r := sampleRendered()
			s := strings.Repeat("p", pad) + s
			r.Text, r.Model, r.Messages[0].Role, r.Messages[1].Content[0].Text = s, s, s, s
			r.Messages[1].Content[1].Media.URL, r.Messages[1].Content[1].Media.ContentType = s, s
			checkRendered(t, v, r)
		}
	}
}

func TestAppendRenderedAllocates(t *testing.T) {
	is := is.New(t)
	v, r := sampleRendered()
	buf := make([]byte, 0, 4096)
	is.Equal(testing.AllocsPerRun(100, func() { buf = api.AppendRendered(buf[:0], v, r) }), 0.0) // no allocation
}

func FuzzAppendRendered(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, s, ct string) {
		v, r := sampleRendered()
		r.Text, r.Messages[0].Content[0].Text, r.Messages[1].Role = s, s, s
		r.Messages[1].Content[1].Media.ContentType = ct
		checkRendered(t, v, r)
	})
}
