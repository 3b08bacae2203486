package dotprompt

import (
	"regexp"
	"strings"
	"unicode"
)

// Message is one chat message, in Dotprompt's shape.
type Message struct {
	Role     string         `json:"role"`
	Content  []Part         `json:"content"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Part is a text part, a media part, or (from {{section}}) a pending part
// with only metadata.
type Part struct {
	Text     string         `json:"text,omitempty"`
	Media    *Media         `json:"media,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Media is a media part's reference.
type Media struct {
	URL         string `json:"url"`
	ContentType string `json:"contentType,omitempty"`
}

// Result is a rendered template.
type Result struct {
	Messages []Message
	Text     string // the text parts of all messages, concatenated
}

type msgSource struct {
	role    string
	segs    []seg
	content []Part
	meta    map[string]any
}

func blank(segs []seg) bool {
	for _, s := range segs {
		if s.kind != sText || strings.TrimSpace(s.text) != "" {
			return false
		}
	}
	return true
}

// toMessages splits rendered output at role and history markers as
// Dotprompt does.
func toMessages(segs []seg, history []Message) []Message {
	// Each message's text is one run of segments between markers (a run
	// ends at each marker, and a message takes at most one that is not
	// blank: a role marker after one starts another message), so a
	// message's segments are a slice of segs, not a copy.
	srcs := make([]msgSource, 1, 4)
	srcs[0].role = "user"
	cur, start := 0, 0
	endPiece := func(end int) {
		if piece := segs[start:end:end]; !blank(piece) {
			if len(srcs[cur].segs) == 0 {
				srcs[cur].segs = piece // a slice of segs, not a copy
			} else {
				srcs[cur].segs = append(srcs[cur].segs, piece...)
			}
		}
	}
	for i, s := range segs {
		switch s.kind {
		case sRole:
			endPiece(i)
			if len(srcs[cur].segs) > 0 {
				srcs = append(srcs, msgSource{role: s.text})
				cur = len(srcs) - 1
			} else {
				srcs[cur].role = s.text
			}
		case sHistory:
			endPiece(i)
			for _, m := range history {
				srcs = append(srcs, msgSource{role: m.Role, content: m.Content, meta: historyMeta(m.Metadata)})
			}
			srcs = append(srcs, msgSource{role: "model"})
			cur = len(srcs) - 1
		default:
			continue
		}
		start = i + 1
	}
	endPiece(len(segs))
	msgs := make([]Message, 0, len(srcs))
	// The parts of all messages are slices of one array.
	n := 0
	for _, s := range srcs {
		if s.content == nil {
			n += len(s.segs)
		}
	}
	parts := make([]Part, 0, n)
	for _, s := range srcs {
		if s.content == nil && blank(s.segs) {
			continue
		}
		m := Message{Role: s.role, Content: s.content, Metadata: s.meta}
		if s.content == nil {
			start := len(parts)
			parts = appendParts(parts, s.segs)
			m.Content = parts[start:len(parts):len(parts)]
		}
		msgs = append(msgs, m)
	}
	return insertHistory(msgs, history)
}

func historyMeta(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out["purpose"] = "history"
	return out
}

func insertHistory(msgs, history []Message) []Message {
	if len(history) == 0 {
		return msgs
	}
	for _, m := range msgs {
		if m.Metadata["purpose"] == "history" {
			return msgs
		}
	}
	if len(msgs) == 0 {
		return append([]Message(nil), history...)
	}
	last := msgs[len(msgs)-1]
	if last.Role == "user" {
		out := append([]Message(nil), msgs[:len(msgs)-1]...)
		out = append(out, history...)
		return append(out, last)
	}
	return append(msgs, history...)
}

// appendParts appends the parts of segs to parts.
func appendParts(parts []Part, segs []seg) []Part {
	for _, s := range segs {
		switch s.kind {
		case sText:
			if strings.TrimSpace(s.text) != "" {
				parts = append(parts, Part{Text: s.text})
			}
		case sMedia:
			parts = append(parts, Part{Media: &Media{URL: s.text, ContentType: s.ct}})
		case sSection:
			parts = append(parts, Part{Metadata: map[string]any{"purpose": s.text, "pending": true}})
		}
	}
	return parts
}

// adjacentText returns the text parts that toMessages makes of segs (the
// text segments that are not blank, in order, when no history is
// inserted) joined, as a slice of all, when they are adjacent in it: as a
// render writes them, unless blank text falls between two. It reports
// false when they are not.
func adjacentText(segs []seg, all string) (string, bool) {
	start, end := 0, -1
	for _, s := range segs {
		if s.kind != sText || strings.TrimSpace(s.text) == "" {
			continue
		}
		switch {
		case end < 0:
			start = s.off
		case s.off != end:
			return "", false
		}
		end = s.off + len(s.text)
	}
	if end < 0 {
		return "", true
	}
	return all[start:end], true
}

// joinText returns the text parts of msgs joined.
func joinText(msgs []Message) string {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Content {
			n += len(p.Text)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, m := range msgs {
		for _, p := range m.Content {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

var frontMatterRe = regexp.MustCompile(`^(?:(?:#[^\n]*|[ \t]*)\n)*---\s*(?:\r\n|\r|\n)([\s\S]*?)(?:\r\n|\r|\n)---\s*(?:\r\n|\r|\n)([\s\S]*)$`)
var emptyFrontMatterRe = regexp.MustCompile(`^(?:(?:#[^\n]*|[ \t]*)\n)*---\s*\n---\s*\n([\s\S]*)$`)

// SplitSource splits a Dotprompt source (a .prompt file) into its front
// matter (without the --- lines; "" when none) and its body, trimmed as
// Dotprompt trims it before rendering: all surrounding white space when
// the source has front matter, else only white space other than line
// breaks; a source without front matter is its body unchanged.
func SplitSource(source string) (frontMatter, body string) {
	if m := frontMatterRe.FindStringSubmatch(source); m != nil {
		return m[1], strings.TrimSpace(m[2])
	}
	if m := emptyFrontMatterRe.FindStringSubmatch(source); m != nil {
		return "", trimExceptNewlines(m[1])
	}
	return "", source
}

// Body trims a template body stored apart from its front matter as
// Dotprompt trims a body read from a source with front matter.
func Body(body string) string { return strings.TrimSpace(body) }

func trimExceptNewlines(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) && r != '\n' && r != '\r' && r != ' ' {
			return -1
		}
		return r
	}, s)
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) && r != '\n' && r != '\r' })
}
