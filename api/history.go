package api

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/promptkit/prompts"
)

// History is a render's history: the messages {{history}} inserts, in
// Dotprompt's shape. Decoding it checks each message and part, naming
// what is wrong by its path (history[0].content[1].media.url): a message
// is {"role", "content", "metadata"} (metadata, an object, is Dotprompt's
// and ignored); a part is {"text"} or {"media": {"url", "contentType"}},
// never both, with an optional "metadata" object, ignored too; a media
// part's url is required.
type History []Message

// UnmarshalJSON reads an array of messages; null leaves h nil.
func (h *History) UnmarshalJSON(b []byte) error {
	*h = nil
	var fe fieldsError
	v := jsontext.Value(b)
	if v.Kind() == 'n' {
		return nil
	}
	var items []jsontext.Value
	if v.Kind() != '[' || json.Unmarshal(v, &items) != nil {
		return fieldsError{{Detail: "must be an array of messages ({\"role\", \"content\": [{\"text\"} or {\"media\": {\"url\", \"contentType\"}}]}) or null"}}
	}
	out := make(History, len(items))
	for i, item := range items {
		out[i] = readMessage(item, "["+strconv.Itoa(i)+"]", &fe)
	}
	if len(fe) > 0 {
		return fe
	}
	*h = out
	return nil
}

// fieldsError is the error of a value refused member by member: each
// Field is a path relative to the member that holds the value ("" for
// the value itself, else as "[0].role").
type fieldsError []prompts.FieldError

func (e fieldsError) Error() string {
	var b strings.Builder
	for i, f := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strings.TrimSpace(f.Field + " " + f.Detail))
	}
	return b.String()
}

func (e *fieldsError) add(field, detail string) {
	*e = append(*e, prompts.FieldError{Field: field, Detail: detail})
}

// members reads v, which must be an object whose members are among
// known, adding an error at path for anything else; nil when v is not
// an object.
func members(v jsontext.Value, path, what string, known []string, fe *fieldsError) map[string]jsontext.Value {
	var m map[string]jsontext.Value
	if v.Kind() != '{' || json.Unmarshal(v, &m) != nil {
		fe.add(path, "must be "+what)
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		found := false
		for _, k := range known {
			found = found || k == name
		}
		if !found {
			fe.add(path+"."+name, "is not a known field; the fields are "+strings.Join(known, ", "))
		}
	}
	return m
}

// str reads the member name of m, a string; ok is false when it is
// absent. It adds an error when the member is not a string.
func str(m map[string]jsontext.Value, name, path string, fe *fieldsError) (s string, ok bool) {
	v, ok := m[name]
	if !ok {
		return "", false
	}
	if v.Kind() != '"' || json.Unmarshal(v, &s) != nil {
		fe.add(path+"."+name, "must be a string")
		return "", false
	}
	return s, true
}

// metadataMember checks the optional metadata member of m: an object or
// null, which Dotprompt gives messages and parts, and which a render
// ignores.
func metadataMember(m map[string]jsontext.Value, path string, fe *fieldsError) {
	if v, ok := m["metadata"]; ok && v.Kind() != '{' && v.Kind() != 'n' {
		fe.add(path+".metadata", "must be an object or null")
	}
}

// readMessage reads the message v at path.
func readMessage(v jsontext.Value, path string, fe *fieldsError) Message {
	const shape = `a message ({"role", "content": [{"text"} or {"media": {"url", "contentType"}}]})`
	m := members(v, path, shape, []string{"role", "content", "metadata"}, fe)
	if m == nil {
		return Message{}
	}
	var out Message
	role, ok := str(m, "role", path, fe)
	if _, given := m["role"]; !given {
		fe.add(path+".role", "is required: system, user, model or tool")
	}
	if ok {
		out.Role = role
	}
	metadataMember(m, path, fe)
	content, given := m["content"]
	var parts []jsontext.Value
	switch {
	case !given:
		fe.add(path+".content", "is required: an array of parts")
	case content.Kind() != '[' || json.Unmarshal(content, &parts) != nil:
		fe.add(path+".content", `must be an array of parts ({"text"} or {"media": {"url", "contentType"}})`)
	}
	out.Content = make([]Part, len(parts))
	for i, p := range parts {
		out.Content[i] = readPart(p, path+".content["+strconv.Itoa(i)+"]", fe)
	}
	return out
}

// readPart reads the part v at path.
func readPart(v jsontext.Value, path string, fe *fieldsError) Part {
	m := members(v, path, `a part ({"text"} or {"media": {"url", "contentType"}})`, []string{"text", "media", "metadata"}, fe)
	if m == nil {
		return Part{}
	}
	metadataMember(m, path, fe)
	_, hasText := m["text"]
	mv, hasMedia := m["media"]
	switch {
	case hasText && hasMedia:
		fe.add(path, "must have text or media, not both")
		return Part{}
	case !hasText && !hasMedia:
		fe.add(path, "must have text or media")
		return Part{}
	case hasText:
		text, ok := str(m, "text", path, fe)
		if !ok {
			return Part{}
		}
		return Part{Text: &text}
	}
	path += ".media"
	media := members(mv, path, `an object {"url", "contentType"}`, []string{"url", "contentType"}, fe)
	if media == nil {
		return Part{}
	}
	var out Media
	url, ok := str(media, "url", path, fe)
	_, given := media["url"]
	switch {
	case !given || ok && url == "":
		fe.add(path+".url", "is required")
	case ok:
		out.URL = url
	}
	if ct, ok := str(media, "contentType", path, fe); ok {
		out.ContentType = ct
	}
	return Part{Media: &out}
}
