package dotprompt

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// ErrSchema is a schema that does not compile; the error names the
// property path at fault.
var ErrSchema = errors.New("schema")

// SchemaResolver returns the JSON Schema registered under a name that a
// Picoschema uses as a type, or nil when there is none.
type SchemaResolver func(name string) (map[string]any, error)

var scalarTypes = []string{"string", "boolean", "null", "number", "integer", "any"}

const wildcardProperty = "(*)"

// Picoschema compiles a Dotprompt schema (Picoschema, or JSON Schema,
// which passes through) into JSON Schema, as Dotprompt does: "type,
// description" strings; "name?" for optional properties (their type
// also allows null); "name(array)", "name(object)", "name(enum)"
// parentheticals; "(*)" for additional properties, which are otherwise
// not allowed. Other type names are looked up with resolve (which may be
// nil). The schema is a value as a YAML or JSON decoder gives it;
// required lists are sorted, since a decoded map has no key order. A nil
// schema compiles to nil.
func Picoschema(schema any, resolve SchemaResolver) (map[string]any, error) {
	if schema == nil {
		return nil, nil
	}
	if s, ok := schema.(string); ok {
		typ, desc := extractDescription(s)
		if slices.Contains(scalarTypes, typ) {
			out := map[string]any{"type": typ}
			if desc != "" {
				out["description"] = desc
			}
			return out, nil
		}
		return resolveNamed(typ, desc, resolve, nil)
	}
	if m, ok := schema.(map[string]any); ok {
		if t, ok := m["type"].(string); ok && (slices.Contains(scalarTypes, t) || t == "object" || t == "array") {
			return m, nil
		}
		if _, ok := m["properties"].(map[string]any); ok {
			out := make(map[string]any, len(m)+1)
			for k, v := range m {
				out[k] = v
			}
			out["type"] = "object"
			return out, nil
		}
	}
	return parsePico(schema, resolve, nil)
}

func resolveNamed(name, desc string, resolve SchemaResolver, path []string) (map[string]any, error) {
	if resolve == nil {
		return nil, schemaErr(path, "unsupported scalar type %q", name)
	}
	s, err := resolve(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSchema, strings.Join(path, "."), err)
	}
	if s == nil {
		return nil, schemaErr(path, "no schema named %q", name)
	}
	out := make(map[string]any, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	if desc != "" {
		out["description"] = desc
	}
	return out, nil
}

func schemaErr(path []string, format string, a ...any) error {
	where := strings.Join(path, ".")
	if where == "" {
		where = "schema"
	}
	return fmt.Errorf("%w: %s: %s", ErrSchema, where, fmt.Sprintf(format, a...))
}

func parsePico(obj any, resolve SchemaResolver, path []string) (map[string]any, error) {
	if len(path) > MaxNesting {
		return nil, schemaErr(path, "nests deeper than %d", MaxNesting)
	}
	if s, ok := obj.(string); ok {
		typ, desc := extractDescription(s)
		if !slices.Contains(scalarTypes, typ) {
			return resolveNamed(typ, desc, resolve, path)
		}
		out := map[string]any{}
		if typ != "any" {
			out["type"] = typ
		}
		if desc != "" {
			out["description"] = desc
		}
		return out, nil
	}
	m, ok := obj.(map[string]any)
	if !ok {
		return nil, schemaErr(path, "a Picoschema consists only of objects and strings, not %T", obj)
	}
	props := map[string]any{}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	var required []string
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		value := m[key]
		sub := append(slices.Clip(path), key)
		if key == wildcardProperty {
			ap, err := parsePico(value, resolve, sub)
			if err != nil {
				return nil, err
			}
			schema["additionalProperties"] = ap
			continue
		}
		name, typeInfo, paren := strings.Cut(key, "(")
		optional := strings.HasSuffix(name, "?")
		prop := strings.TrimSuffix(name, "?")
		if !optional {
			required = append(required, prop)
		}
		if !paren {
			p, err := parsePico(value, resolve, sub)
			if err != nil {
				return nil, err
			}
			if t, ok := p["type"].(string); ok && optional {
				p["type"] = []any{t, "null"}
			}
			props[prop] = p
			continue
		}
		typ, desc := extractDescription(strings.TrimSuffix(typeInfo, ")"))
		var p map[string]any
		switch typ {
		case "array":
			items, err := parsePico(value, resolve, sub)
			if err != nil {
				return nil, err
			}
			p = map[string]any{"type": "array", "items": items}
			if optional {
				p["type"] = []any{"array", "null"}
			}
		case "object":
			var err error
			if p, err = parsePico(value, resolve, sub); err != nil {
				return nil, err
			}
			if optional {
				p["type"] = []any{p["type"], "null"}
			}
		case "enum":
			vals, ok := value.([]any)
			if !ok {
				return nil, schemaErr(sub, "an enum needs a list of values")
			}
			vals = slices.Clone(vals)
			if optional && !slices.Contains(vals, nil) {
				vals = append(vals, nil)
			}
			p = map[string]any{"enum": vals}
		default:
			return nil, schemaErr(sub, "parenthetical types must be object, array or enum, not %q", typ)
		}
		if desc != "" {
			p["description"] = desc
		}
		props[prop] = p
	}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		schema["required"] = req
	}
	return schema, nil
}

var descriptionRe = regexp.MustCompile(`^(.*?), *(.*)$`)

func extractDescription(s string) (typ, desc string) {
	if !strings.Contains(s, ",") {
		return s, ""
	}
	m := descriptionRe.FindStringSubmatch(s)
	if m == nil {
		return s, ""
	}
	return m[1], m[2]
}
