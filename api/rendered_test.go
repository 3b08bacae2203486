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
		checkJoined(t, s[:len(s)/2], s[len(s)/2:])
	})
}

// checkJoined checks the answer of a render whose text is the text parts
// a and b joined, as a render's is (AppendRendered writes the text from
// the parts' JSON then), against Marshal's.
func checkJoined(t *testing.T, a, b string) {
	t.Helper()
	v, r := sampleRendered()
	r.Messages[0].Content[0].Text, r.Messages[1].Content[0].Text, r.Text = a, b, a+b
	checkRendered(t, v, r)
}

// The text of a render is the text parts joined: written from them, it is
// what Marshal writes, whatever the parts hold, and wherever they split
// the text (an invalid byte of a part can be half of a character of the
// text).
func TestAppendRenderedJoinedText(t *testing.T) {
	for _, s := range append(stringCases, "é", "日本", "a\xc3\xa9b", "😀") {
		for i := range len(s) + 1 {
			checkJoined(t, s[:i], s[i:])
		}
	}
	v, r := sampleRendered()
	r.Text = "You are the support assistant of Acme!Hello" // not the parts joined
	checkRendered(t, v, r)
	r.Text = "You are the support assistant of Acme.Hello, and more"
	checkRendered(t, v, r)
	many, extra := prompts.Message{Role: "user"}, ""
	for i := range 40 {
		many.Content = append(many.Content, prompts.Part{Text: strings.Repeat("\n", i)})
		extra += strings.Repeat("\n", i)
	}
	r.Messages = append(r.Messages, many)
	r.Text = "You are the support assistant of Acme.Hello" + extra
	checkRendered(t, v, r) // more parts than AppendRendered keeps the place of
}
