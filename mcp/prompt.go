package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
)

// argument is one argument of a prompt: a variable of its active version.
type argument struct {
	name, description, typ string
	required               bool
}

// describe returns how the server lists ap: named SLUG/KEY, its arguments
// the variables of its active version, with what the version's input
// schema says of them.
func describe(slug string, ap prompts.ActivePrompt) listed {
	l := listed{name: slug + "/" + ap.Key}
	if ap.Description != nil {
		l.description = *ap.Description
	}
	l.args = arguments(*ap.ActiveVersion)
	l.version = ap.ActiveVersion.ID
	return l
}

func (l listed) prompt() *sdk.Prompt {
	p := &sdk.Prompt{Name: l.name, Description: l.description}
	for _, a := range l.args {
		p.Arguments = append(p.Arguments, &sdk.PromptArgument{Name: a.name, Description: a.description, Required: a.required})
	}
	return p
}

// arguments returns the arguments of v: its variables, and the properties
// of its input schema (metadata_.input.schema, in JSON Schema or
// Picoschema) when it has one, sorted by name. Without a schema a plain
// version's variables are all required (its rendering is strict) and a
// dotprompt version's none.
func arguments(v prompts.PromptVersion) []argument {
	props, hasSchema := inputSchema(v.Metadata)
	var args []argument
	for _, name := range v.Variables {
		a := argument{name: name, required: v.TemplateFormat.Or(prompts.FormatPlain) == prompts.FormatPlain}
		if p, ok := props[name]; ok {
			a = p
		} else if hasSchema {
			a.required = false
		}
		args = append(args, a)
	}
	for name, p := range props {
		if !slices.Contains(v.Variables, name) {
			args = append(args, p)
		}
	}
	slices.SortFunc(args, func(a, b argument) int { return strings.Compare(a.name, b.name) })
	return args
}

// inputSchema reads the properties of metadata_.input.schema, leniently:
// a schema it cannot read has none. A JSON Schema is an object with
// "properties" (and "required"); anything else is read as Picoschema:
// "name": "type, description", "name?" when optional, "name(type,
// description)" for an object or array.
func inputSchema(m prompts.Metadata) (map[string]argument, bool) {
	if m.IsNull() {
		return nil, false
	}
	var meta struct {
		Input struct {
			Schema map[string]json.RawMessage `json:"schema"`
		} `json:"input"`
	}
	if json.Unmarshal([]byte(m), &meta) != nil || meta.Input.Schema == nil {
		return nil, false
	}
	s := meta.Input.Schema
	props := make(map[string]argument)
	if raw, ok := s["properties"]; ok {
		var ps map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		}
		var req []string
		if json.Unmarshal(raw, &ps) != nil {
			return nil, false
		}
		_ = json.Unmarshal(s["required"], &req)
		for name, p := range ps {
			typ, _ := p.Type.(string)
			if ts, ok := p.Type.([]any); ok { // ["string", "null"]
				for _, t := range ts {
					if t, _ := t.(string); t != "null" && typ == "" {
						typ = t
					}
				}
			}
			props[name] = argument{name: name, description: p.Description, typ: typ, required: slices.Contains(req, name)}
		}
		return props, true
	}
	for field, raw := range s {
		name, typ, desc := field, "", ""
		optional := false
		if i := strings.IndexByte(name, '('); i > 0 && strings.HasSuffix(name, ")") {
			typ, desc, _ = strings.Cut(name[i+1:len(name)-1], ",")
			name = name[:i]
		}
		if name, optional = strings.CutSuffix(name, "?"); optional {
			// name? is optional
		}
		var text string
		if json.Unmarshal(raw, &text) == nil && typ == "" {
			typ, desc, _ = strings.Cut(text, ",")
		} else if typ == "" && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			typ = "object"
		}
		typ = strings.TrimSpace(typ)
		if typ == "any" {
			typ = ""
		}
		props[name] = argument{name: name, description: strings.TrimSpace(desc), typ: typ, required: !optional}
	}
	return props, true
}

// values returns the values of a render from the string arguments of
// prompts/get: for a dotprompt version with an input schema, a property of
// type number, integer, boolean, object or array takes its argument as
// JSON (42, true, {"a": 1}); every other argument is the string given.
func values(v prompts.PromptVersion, args map[string]string) (map[string]any, error) {
	out := make(map[string]any, len(args))
	var props map[string]argument
	if v.TemplateFormat == prompts.FormatDotprompt {
		props, _ = inputSchema(v.Metadata)
	}
	var bad []string
	for _, name := range slices.Sorted(maps.Keys(args)) {
		s := args[name]
		p := props[name]
		switch p.typ {
		case "number", "integer", "boolean", "object", "array":
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			var val any
			err := dec.Decode(&val)
			if err == nil && dec.More() {
				err = errors.New("trailing data")
			}
			ok := err == nil
			switch val.(type) {
			case json.Number:
				ok = ok && (p.typ == "number" || p.typ == "integer" && !strings.ContainsAny(s, ".eE"))
			case bool:
				ok = ok && p.typ == "boolean"
			case map[string]any:
				ok = ok && p.typ == "object"
			case []any:
				ok = ok && p.typ == "array"
			default:
				ok = false
			}
			if !ok {
				bad = append(bad, name+": must be "+article(p.typ)+" (the input schema says so), written as JSON")
				continue
			}
			out[name] = val
		default:
			out[name] = s
		}
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if _, given := args[name]; !given && props[name].required {
			bad = append(bad, name+": is required")
		}
	}
	if len(bad) > 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid arguments: " + strings.Join(bad, "; ")}
	}
	return out, nil
}

func article(typ string) string {
	if typ == "integer" || typ == "object" || typ == "array" {
		return "an " + typ
	}
	return "a " + typ
}

// getPrompt is prompts/get of the prompt with this id: its version active
// in the view's environment, rendered with the arguments.
func (v *view) getPrompt(promptID string) sdk.PromptHandler {
	return func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		name := req.Params.Name
		ap, _, err := prompts.ReadActive(ctx, v.h.store, prompts.ActiveQuery{PromptID: promptID, Environment: v.env, Shared: true})
		if err == nil && !v.access.Allows(ap.ProjectID) {
			err = prompts.ErrNotFound
		}
		if err != nil {
			return nil, rpcError(err, name)
		}
		if ap.ActiveVersion == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "prompt " + strconv.Quote(name) + ": no version is active in " + string(v.env)}
		}
		vals, err := values(*ap.ActiveVersion, req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		ver, out, err := v.h.render(ctx, prompts.RenderRequest{PromptID: promptID, Environment: prompts.Some(v.env), Variables: vals})
		if err != nil {
			return nil, rpcError(err, name)
		}
		res := &sdk.GetPromptResult{Messages: messages(out.Messages), Meta: sdk.Meta{
			"prompt_id":      promptID,
			"version_id":     ver.ID,
			"version_number": ver.VersionNumber,
			"environment":    string(v.env),
		}}
		if ap.Description != nil {
			res.Description = *ap.Description
		}
		return res, nil
	}
}

// rpcError is the JSON-RPC error of a store's or a render's error: invalid
// params for what the client can mend (an unknown prompt, a missing or
// unused argument), internal otherwise.
func rpcError(err error, name string) error {
	var pe *prompts.Error
	switch {
	case errors.Is(err, prompts.ErrNotFound):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown prompt " + strconv.Quote(name)}
	case errors.Is(err, prompts.ErrInvalid) && errors.As(err, &pe):
		fields := make([]string, len(pe.Fields))
		for i, f := range pe.Fields {
			fields[i] = strings.TrimPrefix(f.Field, "variables.") + ": " + f.Detail
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid arguments: " + strings.Join(fields, "; ")}
	case prompts.ErrorCode(err) == prompts.CodeUnavailable:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the store is unavailable; retry later"}
	case prompts.ErrorCode(err) == prompts.CodeConflict || prompts.ErrorCode(err) == prompts.CodeForbidden:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server failed to render " + strconv.Quote(name)}
}

// messages returns the messages of a render as MCP's: a message per part
// (adjacent text parts of one message joined). Dotprompt's model is MCP's
// assistant; MCP has no system or tool role, so those are user messages.
// A media part is an image or audio content when its URL is a data: URL
// of such a type, else a resource link to the URL.
func messages(ms []prompts.Message) []*sdk.PromptMessage {
	out := []*sdk.PromptMessage{}
	for _, m := range ms {
		role := sdk.Role("user")
		if m.Role == "model" {
			role = "assistant"
		}
		var text strings.Builder
		hasText := false
		flush := func() {
			if hasText {
				out = append(out, &sdk.PromptMessage{Role: role, Content: &sdk.TextContent{Text: text.String()}})
				text.Reset()
				hasText = false
			}
		}
		for _, p := range m.Content {
			if p.Media == nil {
				text.WriteString(p.Text)
				hasText = true
				continue
			}
			flush()
			out = append(out, &sdk.PromptMessage{Role: role, Content: mediaContent(*p.Media)})
		}
		flush()
	}
	return out
}

func mediaContent(m prompts.Media) sdk.Content {
	if rest, ok := strings.CutPrefix(m.URL, "data:"); ok {
		header, data, _ := strings.Cut(rest, ",")
		mime, isBase64 := strings.CutSuffix(header, ";base64")
		if m.ContentType != "" {
			mime = m.ContentType
		}
		if b, err := base64.StdEncoding.DecodeString(data); isBase64 && err == nil {
			switch {
			case strings.HasPrefix(mime, "image/"):
				return &sdk.ImageContent{Data: b, MIMEType: mime}
			case strings.HasPrefix(mime, "audio/"):
				return &sdk.AudioContent{Data: b, MIMEType: mime}
			}
		}
	}
	return &sdk.ResourceLink{URI: m.URL, Name: m.URL, MIMEType: m.ContentType}
}
