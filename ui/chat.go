package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/dotprompt"
)

// member is one member of a JSON object, in the object's order.
type member struct {
	Key string
	Raw json.RawMessage
}

// Text is the member's value for people: a string as it is, anything
// else as compact JSON.
func (m member) Text() string { return valueText(m.Raw) }

// Composite reports whether the member's value is an object or an array.
func (m member) Composite() bool {
	t := bytes.TrimSpace(m.Raw)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// valueText is a JSON value for people: a string as it is, anything else
// as compact JSON.
func valueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// members returns the members of the JSON object text, in order; an
// error when text is not one JSON object. Names given twice are all
// kept (the Store refuses them).
func members(text string) ([]member, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(text, dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("must be a JSON object, in braces {…}")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(text, dec, err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonError(text, dec, err)
		}
		out = append(out, member{Key: key, Raw: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(text, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("is not valid JSON: more follows the object")
	}
	return out, nil
}

// jsonError says where text stops being JSON, by line and column.
func jsonError(text string, dec *json.Decoder, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("is not valid JSON: it ends too soon")
	}
	off := int(dec.InputOffset())
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = int(se.Offset) - 1 // Offset counts the byte at fault
	}
	off = min(max(off, 0), len(text))
	line := 1 + strings.Count(text[:off], "\n")
	col := off - strings.LastIndex(text[:off], "\n")
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return fmt.Errorf("is not valid JSON (line %d, column %d): %s", line, col, msg)
}

// parseValue reads one JSON value, numbers kept as json.Number.
func parseValue(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(text, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("is not valid JSON: more follows the value (a text needs quotes, or choose Text)")
	}
	return v, nil
}

// decodeAny decodes raw, numbers kept as json.Number; nil when it does
// not decode.
func decodeAny(raw json.RawMessage) any {
	v, err := parseValue(string(raw))
	if err != nil {
		return nil
	}
	return v
}

// ----- front matter -----

// frontMatter is a dotprompt version's metadata_, as its page shows it.
type frontMatter struct {
	Model    string   // "" when none
	Config   []member // config's members, in order
	Input    *schemaView
	Defaults []member // input.default's members
	Output   *schemaView
	OutFmt   string // output.format
	Tools    []string
	Other    []member // metadata, ns.key extensions and anything else
	Any      bool     // anything at all
	defaults map[string]any
	props    map[string]schemaProp // input.schema's properties by name
}

// schemaView is a schema compiled to JSON Schema (Picoschema compiles),
// shown as its top-level properties; JSON holds the schema as given
// when it is not an object with properties (or does not compile), and
// Err why it does not compile.
type schemaView struct {
	Props []schemaProp
	JSON  string
	Err   string
}

type schemaProp struct {
	Name        string
	Type        string
	Required    bool
	Description string
	fill        fill // what a placeholder for it can be
}

// fill is the kind of placeholder value a property's schema takes: a
// text, a list of one text, or none.
type fill int

const (
	fillNone fill = iota
	fillText
	fillList
)

// fillOf says what placeholder the JSON Schema s takes: a text when it
// takes any string (a type that names string, no enum or const), a list
// of one text when it is an array of such strings.
func fillOf(s map[string]any) fill {
	switch {
	case takesType(s, "string") && s["enum"] == nil && s["const"] == nil:
		return fillText
	case takesType(s, "array") && s["enum"] == nil && s["const"] == nil:
		items, _ := s["items"].(map[string]any)
		if items != nil && fillOf(items) == fillText {
			return fillList
		}
	}
	return fillNone
}

// takesType reports whether the JSON Schema s names the type t.
func takesType(s map[string]any, t string) bool {
	switch x := s["type"].(type) {
	case string:
		return x == t
	case []any:
		return slices.Contains(x, any(t))
	}
	return false
}

// readFrontMatter reads m as Dotprompt front matter; members of the
// wrong shape are shown as JSON among Other, not refused: the page shows
// what is stored.
func readFrontMatter(m prompts.Metadata) frontMatter {
	var fm frontMatter
	if m.IsNull() {
		return fm
	}
	ms, err := members(string(m))
	if err != nil {
		return fm
	}
	fm.Any = len(ms) > 0
	for _, mem := range ms {
		switch mem.Key {
		case "model":
			if json.Unmarshal(mem.Raw, &fm.Model) == nil {
				continue
			}
		case "config":
			if cs, err := members(string(mem.Raw)); err == nil {
				fm.Config = cs
				continue
			}
		case "input":
			in, err := members(string(mem.Raw))
			if err != nil {
				break
			}
			for _, x := range in {
				switch x.Key {
				case "schema":
					fm.Input = viewSchema(x.Raw)
					fm.props = map[string]schemaProp{}
					for _, p := range fm.Input.Props {
						fm.props[p.Name] = p
					}
				case "default":
					if ds, err := members(string(x.Raw)); err == nil {
						fm.Defaults = ds
						fm.defaults = map[string]any{}
						for _, d := range ds {
							fm.defaults[d.Key] = decodeAny(d.Raw)
						}
						continue
					}
					fm.Other = append(fm.Other, member{Key: "input.default", Raw: x.Raw})
				default:
					fm.Other = append(fm.Other, member{Key: "input." + x.Key, Raw: x.Raw})
				}
			}
			continue
		case "output":
			out, err := members(string(mem.Raw))
			if err != nil {
				break
			}
			for _, x := range out {
				switch x.Key {
				case "schema":
					fm.Output = viewSchema(x.Raw)
				case "format":
					fm.OutFmt = valueText(x.Raw)
				default:
					fm.Other = append(fm.Other, member{Key: "output." + x.Key, Raw: x.Raw})
				}
			}
			continue
		case "tools":
			var tools []string
			if json.Unmarshal(mem.Raw, &tools) == nil {
				fm.Tools = tools
				continue
			}
		}
		fm.Other = append(fm.Other, mem)
	}
	return fm
}

// viewSchema compiles a schema as Dotprompt does and lists its
// properties.
func viewSchema(raw json.RawMessage) *schemaView {
	sv := &schemaView{JSON: prettyJSON(raw)}
	compiled, err := dotprompt.Picoschema(decodeAny(raw), nil)
	if err != nil {
		sv.Err = strings.TrimPrefix(err.Error(), "schema: ")
		return sv
	}
	props, _ := compiled["properties"].(map[string]any)
	if props == nil {
		return sv
	}
	var required []string
	if rs, ok := compiled["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				required = append(required, s)
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		desc, _ := p["description"].(string)
		sv.Props = append(sv.Props, schemaProp{Name: n, Type: typeText(p), Required: slices.Contains(required, n), Description: desc, fill: fillOf(p)})
	}
	return sv
}

// typeText says a JSON Schema's type in a few words: "string", "array
// of string", "string or null", "one of a, b".
func typeText(s map[string]any) string {
	if s == nil {
		return "any"
	}
	if e, ok := s["enum"].([]any); ok {
		vs := make([]string, 0, len(e))
		for _, v := range e {
			b, _ := json.Marshal(v)
			vs = append(vs, string(b))
		}
		return "one of " + strings.Join(vs, ", ")
	}
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types = append(types, s)
			}
		}
	}
	if len(types) == 0 {
		return "any"
	}
	for i, t := range types {
		if t == "array" {
			items, _ := s["items"].(map[string]any)
			types[i] = "array of " + typeText(items)
		}
	}
	return strings.Join(types, " or ")
}

// prettyJSON returns raw indented, or as it is when it is not JSON.
func prettyJSON(raw []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// ----- messages -----

// chatView is a dotprompt version rendered for its page: with its
// input.default values and, for each required value without a default,
// a placeholder when its schema takes one (a text, or a list of one
// text); the messages show placeholders marked as such. When a required
// value takes no placeholder (a number, an object, a text from a list
// of choices), nothing is rendered and Needs names them.
type chatView struct {
	Messages     []previewMessage
	Placeholders []string // the variables placeholders stand in for, sorted
	Needs        []string // required variables without a default or placeholder, sorted: not rendered
	Err          string   // why it did not render
}

// previewMessage is a message of a version's preview: its parts, each
// text split into what the template wrote and the placeholders.
type previewMessage struct {
	Role  string
	Parts []previewPart
}

type previewPart struct {
	Text  []segment // a text part; nil for media
	Media *prompts.Media
	URL   []segment // the media's URL, when a placeholder is in it (it is then no link)
}

// segment is a piece of a rendered text: text as rendered, or the
// placeholder of the variable Var.
type segment struct {
	Text string
	Var  string // "" for text
}

// Placeholder is how a placeholder shows: {{name}}.
func (s segment) Placeholder() string { return "{{" + s.Var + "}}" }

// Placeholders are made of the variable's name between two characters of
// Unicode's private use area, which no template writes, so that the
// rendered text says where each one landed.
const (
	placeholderOpen  = "\ue000"
	placeholderClose = "\ue001"
)

var placeholderRe = regexp.MustCompile(placeholderOpen + "([^" + placeholderOpen + placeholderClose + "]*)" + placeholderClose)

// preview renders v for its page, as chatView says.
func preview(ctx context.Context, r *prompts.Renderer, v prompts.PromptVersion, fm frontMatter) chatView {
	var cv chatView
	values := maps.Clone(fm.defaults)
	if values == nil {
		values = map[string]any{}
	}
	names := slices.Sorted(maps.Keys(fm.props))
	for _, name := range names {
		p := fm.props[name]
		if _, ok := values[name]; ok || !p.Required {
			continue
		}
		mark := placeholderOpen + name + placeholderClose
		switch p.fill {
		case fillText:
			values[name] = mark
		case fillList:
			values[name] = []any{mark}
		default:
			cv.Needs = append(cv.Needs, name)
			continue
		}
		cv.Placeholders = append(cv.Placeholders, name)
	}
	if len(cv.Needs) > 0 {
		return cv
	}
	// By number: partials at their versions active in production.
	_, out, err := r.Render(ctx, prompts.RenderRequest{PromptID: v.PromptID, VersionNumber: prompts.Some(v.VersionNumber), Variables: values, AllowUnused: true})
	if err != nil {
		cv.Err = errorText(err)
		for _, name := range cv.Placeholders { // an error may quote a placeholder, as it is or JSON-escaped
			cv.Err = strings.ReplaceAll(cv.Err, placeholderOpen+name+placeholderClose, "{{"+name+"}}")
			cv.Err = strings.ReplaceAll(cv.Err, `\ue000`+name+`\ue001`, "{{"+name+"}}")
		}
		return cv
	}
	for _, m := range out.Messages {
		pm := previewMessage{Role: m.Role}
		for _, part := range m.Content {
			if part.Media != nil {
				pp := previewPart{Media: part.Media}
				if segs := segments(part.Media.URL, cv.Placeholders); slices.ContainsFunc(segs, func(s segment) bool { return s.Var != "" }) {
					pp.URL = segs
				}
				pm.Parts = append(pm.Parts, pp)
				continue
			}
			pm.Parts = append(pm.Parts, previewPart{Text: segments(part.Text, cv.Placeholders)})
		}
		cv.Messages = append(cv.Messages, pm)
	}
	return cv
}

// segments splits text at the placeholders of the variables vars (nil
// for ""); the marks of anything else stay text.
func segments(text string, vars []string) []segment {
	var out []segment
	last := 0
	for _, m := range placeholderRe.FindAllStringSubmatchIndex(text, -1) {
		name := text[m[2]:m[3]]
		if !slices.Contains(vars, name) {
			continue
		}
		if m[0] > last {
			out = append(out, segment{Text: text[last:m[0]]})
		}
		out = append(out, segment{Var: name})
		last = m[1]
	}
	if last < len(text) {
		out = append(out, segment{Text: text[last:]})
	}
	return out
}

// errorText says an error of the root package for people: its fields'
// details, or its text.
func errorText(err error) string {
	var pe *prompts.Error
	if !errors.As(err, &pe) || len(pe.Fields) == 0 {
		return err.Error()
	}
	parts := make([]string, 0, len(pe.Fields))
	for _, f := range pe.Fields {
		parts = append(parts, strings.TrimPrefix(f.Field, "variables.")+" "+f.Detail)
	}
	return strings.Join(parts, "; ")
}

// roleLabel names a message's role for people.
func roleLabel(role string) string {
	switch role {
	case "system":
		return "System"
	case "user":
		return "User"
	case "model":
		return "Model"
	case "tool":
		return "Tool"
	}
	return role
}

// isFormat reports whether a version's format is f (a version without
// one is plain).
func isFormat(v prompts.PromptVersion, f string) bool {
	return string(v.TemplateFormat.Or(prompts.FormatPlain)) == f
}
