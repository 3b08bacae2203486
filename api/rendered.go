package api

import (
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
)

// AppendRendered appends the JSON of FromRendered(v, r) to b, byte for
// byte as Marshal writes it, without reflection: the answer of a render,
// which an application asks for on each request it sends a model.
// BENCHMARKS.md ("Render over HTTP") has the figures that keep it.
func AppendRendered(b []byte, v prompts.PromptVersion, r prompts.Rendered) []byte {
	b = append(b, `{"prompt_id":`...)
	b = appendString(b, v.PromptID)
	b = append(b, `,"version_id":`...)
	b = appendString(b, v.ID)
	b = append(b, `,"version_number":`...)
	b = strconv.AppendInt(b, int64(v.VersionNumber), 10)
	b = append(b, `,"template_format":`...)
	b = appendString(b, string(v.TemplateFormat.Or(prompts.FormatPlain)))
	b = append(b, `,"messages":[`...)
	// Where each text part's JSON is written, for the text (see below).
	var spans [16]span
	n, whole := 0, true
	for i, m := range r.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = appendString(b, m.Role)
		b = append(b, `,"content":[`...)
		for j, p := range m.Content {
			if j > 0 {
				b = append(b, ',')
			}
			if p.Media == nil {
				b = append(b, `{"text":`...)
				start := len(b) + 1
				var valid bool
				b, valid = appendStringValid(b, p.Text)
				if n < len(spans) && valid {
					spans[n] = span{start, len(b) - 1, p.Text}
					n++
				} else {
					whole = false
				}
				b = append(b, '}')
				continue
			}
			b = append(b, `{"media":{"url":`...)
			b = appendString(b, p.Media.URL)
			if p.Media.ContentType != "" {
				b = append(b, `,"contentType":`...)
				b = appendString(b, p.Media.ContentType)
			}
			b = append(b, "}}"...)
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"model":`...)
	if r.Model == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, r.Model)
	}
	// Config and Output are the compact JSON text of the front matter's
	// objects, which Marshal writes as they are.
	b = append(b, `,"config":`...)
	b = appendRaw(b, r.Config)
	b = append(b, `,"output":`...)
	b = appendRaw(b, r.Output)
	b = append(b, `,"text":`...)
	// The text is the text parts joined (see prompts.Rendered): its JSON
	// is then theirs joined, as just written, when each part was valid
	// UTF-8 (escaping goes rune by rune), rather than the text escaped
	// again.
	if whole && joins(r.Text, spans[:n]) {
		b = append(b, '"')
		for _, sp := range spans[:n] {
			b = append(b, b[sp.start:sp.end]...)
		}
		b = append(b, '"')
	} else {
		b = appendString(b, r.Text)
	}
	return append(b, '}')
}

// span is where a text part's JSON string, quotes left out, is in the
// answer being written.
type span struct {
	start, end int
	text       string
}

// joins reports whether text is the texts of spans joined.
func joins(text string, spans []span) bool {
	for _, sp := range spans {
		if !strings.HasPrefix(text, sp.text) {
			return false
		}
		text = text[len(sp.text):]
	}
	return text == ""
}

// appendRaw appends s, JSON text, or null for "".
func appendRaw(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return append(b, s...)
}
