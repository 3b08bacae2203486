package api

import (
	"strconv"

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
				b = appendString(b, p.Text)
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
	b = appendString(b, r.Text)
	return append(b, '}')
}

// appendRaw appends s, JSON text, or null for "".
func appendRaw(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return append(b, s...)
}
