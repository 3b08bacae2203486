package prompts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/promptkit/prompts/internal/dotprompt"
)

// A dotprompt version's metadata_ is its Dotprompt front matter, less name
// and description. The keys Dotprompt defines must have their shape, which
// a Store checks when it stores the version (see VersionSignature):
//
//	model              a string: the model's name
//	config             an object: the model's configuration
//	input.schema       Picoschema or JSON Schema of an object: the variables
//	input.default      an object: values for the variables not given
//	output.format      a string
//	output.schema      Picoschema or JSON Schema
//	tools              an array of strings
//	metadata           an object
//	ns.key             namespaced extension keys: any value
//
// name and description are the prompt's, not the version's, and keys in
// the namespace prompts. (as prompts.format) are a .prompt file's format
// marker: none of them can be in a dotprompt version's metadata_, since
// export could not write it back. Any other key is kept as it is. Schemas compile with
// github.com/santhosh-tekuri/jsonschema/v6 (JSON Schema 2020-12 unless
// the schema's $schema names another draft) and never load anything: a
// $ref to another document is an error, and so is a cycle of references
// that never reaches a value (as {"$defs":{"a":{"$ref":"#/$defs/a"}}}),
// which would fail every render. A plain version's metadata_ is
// free-form: none of this applies to it.

// Signature is what a Store computes of a version, once its format is
// known, and keeps with it: its variables (PromptVersion.Variables) and
// its inputs, which the promotion guard compares too.
type Signature struct {
	// Variables are the version's variables: for a dotprompt version
	// with an input schema, the schema's properties; else the names its
	// template reads (see TemplateVariables). Sorted, non-nil.
	Variables []string
	// Inputs are the variables the input schema types, one entry each,
	// "NAME\tTYPE\tREQUIRED\tSCHEMA", sorted, non-nil: empty for a
	// version without an input schema (every plain version). TYPE is the
	// property's JSON Schema type: "string", "integer", …, several joined
	// with "|" as in "string|null", "enum" for an enum, "any" when the
	// schema does not say; REQUIRED is "required" or "optional"; SCHEMA is
	// the property's whole schema (as JSON Schema, Picoschema converted)
	// in a canonical form: JSON with sorted keys and without the
	// annotations that do not change what it accepts (description,
	// title, $comment, examples), with the root's $defs when it refers to
	// them. Entries stored by earlier releases have no SCHEMA: compared
	// with one, only TYPE and REQUIRED count.
	Inputs []string
}

// VersionSignature checks a version's content and metadata_ in format f
// and returns its Signature. For FormatPlain it is Variables(content)
// and no inputs. For FormatDotprompt the template must parse (as for
// TemplateVariables) and metadata_'s Dotprompt keys must have their shape
// (see the list above); the errors are invalid-input errors naming the
// field: "content", or the key, as "metadata_.config" ("must be an
// object") or "metadata_.input.schema" ("does not compile: …"), all at
// once. Stores call it when they store a version, once its format is
// known; it assumes the metadata is valid (Metadata.Validate).
func VersionSignature(f TemplateFormat, content string, md Metadata) (Signature, error) {
	if f != FormatDotprompt {
		return Signature{Variables: Variables(content), Inputs: []string{}}, nil
	}
	var fe fieldErrors
	t, err := parseTemplate(content)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return Signature{}, err
		}
		fe = append(fe, e.Fields...)
	}
	fm := readFrontMatter(md, &fe)
	fm.checkStored(md, &fe)
	if len(fe) > 0 {
		return Signature{}, fe.err()
	}
	sig := Signature{Variables: t.Variables(), Inputs: fm.inputs}
	if fm.schema != nil {
		sig.Variables = fm.props
	}
	if sig.Variables == nil {
		sig.Variables = []string{}
	}
	if sig.Inputs == nil {
		sig.Inputs = []string{}
	}
	return sig, nil
}

// DiffSignatures returns what activating a version with the signature to
// changes where one with from is active: the variables added and removed
// (as DiffVariables), and for each variable both have whose type or
// requiredness differs, or that only one of them types, an InputChange.
func DiffSignatures(from, to Signature) VariableChange {
	c := DiffVariables(from.Variables, to.Variables)
	a, b := inputsOf(from.Inputs), inputsOf(to.Inputs)
	for _, name := range to.Variables {
		if _, ok := slices.BinarySearch(from.Variables, name); !ok {
			continue // added
		}
		x, y := a[name], b[name]
		if x.typ != y.typ || x.required != y.required || x.schema != "" && y.schema != "" && x.schema != y.schema {
			c.Inputs = append(c.Inputs, InputChange{Name: name, FromType: x.typ, ToType: y.typ, FromRequired: x.required, ToRequired: y.required,
				FromSchema: x.schema, ToSchema: y.schema})
		}
	}
	return c
}

// InputChange is a variable whose type, schema or requiredness a
// promotion changes. A type is "" for a version without an input schema
// (whose variables are not typed, nor required by a schema). A schema is
// the property's canonical schema (see Signature.Inputs), "" when not
// known.
type InputChange struct {
	Name                     string
	FromType, ToType         string
	FromRequired, ToRequired bool
	FromSchema, ToSchema     string
}

// maxSchemaDetail is the longest pair of schemas that Detail quotes.
const maxSchemaDetail = 240

// Detail says what changes, as the promotion guard's errors say it:
// "changes type from string to integer", or for a property of the same
// type that accepts other values, "changes its schema" (with "from X to
// Y" when they are short), "becomes required", "is no longer required",
// or one of the first two and one of the others joined with " and ".
func (c InputChange) Detail() string {
	switch {
	case c.FromType == "":
		d := "is given the type " + c.ToType + " by the input schema"
		if c.ToRequired {
			d += " and becomes required"
		}
		return d
	case c.ToType == "":
		return "is no longer typed by an input schema (it was " + c.FromType + ")"
	}
	var parts []string
	switch {
	case c.FromType != c.ToType:
		parts = append(parts, "changes type from "+c.FromType+" to "+c.ToType)
	case c.FromSchema != "" && c.ToSchema != "" && c.FromSchema != c.ToSchema:
		d := "changes its schema"
		if len(c.FromSchema)+len(c.ToSchema) <= maxSchemaDetail {
			d += " from " + c.FromSchema + " to " + c.ToSchema
		}
		parts = append(parts, d)
	}
	switch {
	case !c.FromRequired && c.ToRequired:
		parts = append(parts, "becomes required")
	case c.FromRequired && !c.ToRequired:
		parts = append(parts, "is no longer required")
	}
	return strings.Join(parts, " and ")
}

type input struct {
	typ      string
	required bool
	schema   string // "" in an entry of an earlier release
}

func inputsOf(entries []string) map[string]input {
	m := make(map[string]input, len(entries))
	for _, e := range entries {
		f := strings.SplitN(e, "\t", 4)
		for len(f) < 4 {
			f = append(f, "")
		}
		m[f[0]] = input{typ: f[1], required: f[2] == "required", schema: f[3]}
	}
	return m
}

// frontMatter is a dotprompt version's metadata_ read as front matter:
// what rendering needs, parsed and compiled once.
type frontMatter struct {
	model          string // "" when absent
	config, output string // JSON text, "" when absent
	defaults       map[string]any
	// With an input schema: the schema, its properties (sorted), whether
	// it names values beyond them (additionalProperties given and not
	// false), and the signature's inputs.
	schema *jsonschema.Schema
	props  []string
	open   bool
	inputs []string
	// quick, for a schema of the simplest shape (as most Picoschema
	// inputs are), checks values that obviously pass it without the
	// validator; nil for any other schema.
	quick *quickSchema
}

// readFrontMatter reads md, adding an error to fe for each Dotprompt key
// with the wrong shape.
func readFrontMatter(md Metadata, fe *fieldErrors) *frontMatter {
	fm := &frontMatter{}
	if md.IsNull() {
		return fm
	}
	dec := json.NewDecoder(strings.NewReader(string(md)))
	dec.UseNumber()
	var top map[string]any
	var raw map[string]json.RawMessage // config and output as stored: key order and digits kept
	if err := dec.Decode(&top); err != nil || json.Unmarshal([]byte(md), &raw) != nil {
		fe.add("metadata_", "must be a JSON object or null")
		return fm
	}
	const field = "metadata_."
	if v, ok := top["model"]; ok {
		if s, ok := v.(string); ok {
			fm.model = s
		} else {
			fe.add(field+"model", "must be a string")
		}
	}
	if v, ok := top["config"]; ok {
		if _, ok := v.(map[string]any); ok {
			fm.config = compact(raw["config"])
		} else {
			fe.add(field+"config", "must be an object")
		}
	}
	if v, ok := top["metadata"]; ok {
		if _, ok := v.(map[string]any); !ok {
			fe.add(field+"metadata", "must be an object")
		}
	}
	if v, ok := top["tools"]; ok {
		list, ok := v.([]any)
		for _, t := range list {
			if _, s := t.(string); !s {
				ok = false
			}
		}
		if !ok {
			fe.add(field+"tools", "must be an array of strings")
		}
	}
	if v, ok := top["output"]; ok {
		out, ok := v.(map[string]any)
		if !ok {
			fe.add(field+"output", "must be an object")
		} else {
			fm.output = compact(raw["output"])
			if f, ok := out["format"]; ok {
				if _, ok := f.(string); !ok {
					fe.add(field+"output.format", "must be a string")
				}
			}
			if s, ok := out["schema"]; ok {
				if _, _, err := compileSchema(s); err != nil {
					fe.add(field+"output.schema", "does not compile: "+err.Error())
				}
			}
		}
	}
	if v, ok := top["input"]; ok {
		in, ok := v.(map[string]any)
		if !ok {
			fe.add(field+"input", "must be an object")
			return fm
		}
		if d, ok := in["default"]; ok {
			if fm.defaults, ok = d.(map[string]any); !ok {
				fe.add(field+"input.default", "must be an object")
			}
		}
		if s, ok := in["schema"]; ok {
			fm.readInputSchema(s, fe)
		}
	}
	return fm
}

// readInputSchema compiles the input schema s.
func (fm *frontMatter) readInputSchema(s any, fe *fieldErrors) {
	const field = "metadata_.input.schema"
	doc, sch, err := compileSchema(s)
	if err != nil {
		fe.add(field, "does not compile: "+err.Error())
		return
	}
	if t, _ := doc["type"].(string); t != "object" {
		fe.add(field, `must describe an object (type "object"): its properties are the version's variables`)
		return
	}
	props, _ := doc["properties"].(map[string]any)
	required := map[string]bool{}
	if list, ok := doc["required"].([]any); ok {
		for _, r := range list {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	fm.schema, fm.props, fm.inputs = sch, slices.Sorted(maps.Keys(props)), make([]string, 0, len(props))
	if fm.props == nil {
		fm.props = []string{}
	}
	for _, name := range fm.props {
		if strings.ContainsAny(name, "\t") {
			fe.add(field, "names the property "+strconv.Quote(name)+": a variable's name holds no tab")
			return
		}
		req := "optional"
		if required[name] {
			req = "required"
		}
		fm.inputs = append(fm.inputs, name+"\t"+schemaType(props[name])+"\t"+req+"\t"+canonicalSchema(props[name], doc))
	}
	ap, given := doc["additionalProperties"]
	fm.open = given && ap != false
	fm.quick = newQuickSchema(doc)
	if !fm.open {
		for _, name := range slices.Sorted(maps.Keys(fm.defaults)) {
			if _, ok := slices.BinarySearch(fm.props, name); !ok {
				fe.add("metadata_.input.default."+name, "is not a property of the input schema")
			}
		}
	}
}

// checkStored adds to fe what a version being stored may not have, on
// top of the shapes readFrontMatter checks: keys that are not settings
// (a .prompt file could not hold them), and default values the input
// schema refuses. A version stored before these checks keeps rendering
// as it did.
func (fm *frontMatter) checkStored(md Metadata, fe *fieldErrors) {
	var top map[string]json.RawMessage
	if md.IsNull() || json.Unmarshal([]byte(md), &top) != nil {
		return // said by readFrontMatter
	}
	const field = "metadata_."
	for _, k := range slices.Sorted(maps.Keys(top)) {
		switch {
		case k == "name":
			fe.add(field+k, "is the prompt's name, not a setting: a dotprompt version's metadata_ is its front matter less name and description; set the prompt's name instead")
		case k == "description":
			fe.add(field+k, "is the prompt's description, not a setting: a dotprompt version's metadata_ is its front matter less name and description; set the prompt's description instead")
		case strings.HasPrefix(k, "prompts."):
			fe.add(field+k, "is reserved: the namespace prompts. holds the .prompt file's format marker (prompts.format), which is the version's template_format, not a setting")
		}
	}
	fm.checkDefaults(fe)
}

// checkDefaults adds an error to fe for each default value the input
// schema refuses: a default of the wrong type would fail every render
// that does not give the value, blaming the caller. The defaults are
// checked as values (of the wrong type, out of an enum, …), not as a
// whole: they need not give every required variable.
func (fm *frontMatter) checkDefaults(fe *fieldErrors) {
	if fm.schema == nil || len(fm.defaults) == 0 {
		return
	}
	err := fm.schema.Validate(fm.defaults)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return
	}
	const field = "metadata_.input.default"
	var errs fieldErrors
	p := message.NewPrinter(language.English)
	leaves(ve, func(e *jsonschema.ValidationError) {
		if len(e.InstanceLocation) == 0 {
			return // of the object: a required value missing, or one not named (said above)
		}
		detail := describe(e, p)
		if len(e.InstanceLocation) > 1 {
			detail = "at /" + strings.Join(e.InstanceLocation[1:], "/") + ": " + detail
		}
		errs.add(field+"."+e.InstanceLocation[0], detail)
	})
	slices.SortStableFunc(errs, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
	*fe = append(*fe, slices.CompactFunc(errs, func(a, b FieldError) bool { return a.Field == b.Field })...)
}

// schemaType returns the type of the property schema p, as Signature's
// Inputs name it.
func schemaType(p any) string {
	m, _ := p.(map[string]any)
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		var types []string
		null := false
		for _, x := range t {
			if s, ok := x.(string); ok {
				if s == "null" {
					null = true
				} else {
					types = append(types, s)
				}
			}
		}
		slices.Sort(types)
		if null {
			types = append(types, "null")
		}
		return strings.Join(types, "|")
	}
	if _, ok := m["enum"]; ok {
		return "enum"
	}
	return "any"
}

// canonicalSchema returns the property schema p of the schema root in the
// form Signature.Inputs gives it: JSON, keys sorted, HTML characters not
// escaped, without annotations, with what p refers to in root: root's
// $defs and definitions when p's references all point into them, else
// root itself (less annotations) under the key "$root".
func canonicalSchema(p any, root map[string]any) string {
	v := stripAnnotations(p)
	if refs := schemaRefs(p, nil); len(refs) > 0 {
		m, ok := v.(map[string]any)
		if !ok {
			m = map[string]any{}
		}
		m = maps.Clone(m)
		local := true
		for _, r := range refs {
			if !strings.HasPrefix(r, "#/$defs/") && !strings.HasPrefix(r, "#/definitions/") {
				local = false
			}
		}
		if local {
			for _, k := range []string{"$defs", "definitions"} {
				if d, ok := root[k]; ok {
					m["$root"+k] = stripAnnotations(map[string]any{k: d}).(map[string]any)[k]
				}
			}
		} else {
			m["$root"] = stripAnnotations(root)
		}
		v = m
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "" // cannot happen: v was decoded from JSON
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// annotations are the keywords that do not change what a schema accepts.
var annotations = []string{"description", "title", "$comment", "examples"}

// Keywords whose value is a schema, an array of schemas, or an object of
// schemas.
var (
	schemaKeywords = []string{"items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains",
		"propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)

// stripAnnotations returns the schema s without annotations, at any depth
// (in subschemas only: an enum's or default's values are kept as they are).
func stripAnnotations(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch {
		case slices.Contains(annotations, k):
			continue
		case slices.Contains(schemaKeywords, k):
			if _, list := v.([]any); !list {
				v = stripAnnotations(v)
			}
		}
		if slices.Contains(schemaListKeywords, k) {
			if list, ok := v.([]any); ok {
				l := make([]any, len(list))
				for i, x := range list {
					l[i] = stripAnnotations(x)
				}
				v = l
			}
		}
		if slices.Contains(schemaMapKeywords, k) {
			if sub, ok := v.(map[string]any); ok {
				o := make(map[string]any, len(sub))
				for name, x := range sub {
					o[name] = stripAnnotations(x)
				}
				v = o
			}
		}
		out[k] = v
	}
	return out
}

// schemaRefs appends to refs the references ($ref, $dynamicRef,
// $recursiveRef) anywhere in s.
func schemaRefs(s any, refs []string) []string {
	switch s := s.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(s)) {
			if r, ok := s[k].(string); ok && (k == "$ref" || k == "$dynamicRef" || k == "$recursiveRef") {
				refs = append(refs, r)
				continue
			}
			refs = schemaRefs(s[k], refs)
		}
	case []any:
		for _, x := range s {
			refs = schemaRefs(x, refs)
		}
	}
	return refs
}

// schemaURL is where a compiled schema is, for the validator: a URL that
// no loader fetches.
const schemaURL = "mem:///schema.json"

// noLoader refuses to load: a schema is compiled from its text alone,
// with no I/O.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("a schema cannot refer to another document (" + url + "): nothing is loaded")
}

// compileSchema compiles a Dotprompt schema (Picoschema or JSON Schema) to
// JSON Schema, and that with the validator.
func compileSchema(s any) (map[string]any, *jsonschema.Schema, error) {
	doc, err := dotprompt.Picoschema(s, nil)
	if err != nil {
		return nil, nil, errors.New(strings.TrimPrefix(err.Error(), dotprompt.ErrSchema.Error()+": "))
	}
	if doc == nil {
		return nil, nil, errors.New("is null")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, nil, err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, nil, errors.New(schemaError(err))
	}
	if loop := refCycle(sch); loop != nil {
		locs := make([]string, len(loop))
		for i, s := range loop {
			locs[i] = "#" + strings.TrimPrefix(s.Location, schemaURL+"#")
		}
		return nil, nil, errors.New("has a reference cycle that never reaches a value (" + strings.Join(locs, " → ") + "): every value would fail to validate")
	}
	return doc, sch, nil
}

// refCycle returns a cycle of schemas that apply to the same value as one
// another ($ref, allOf, anyOf, oneOf, not, if/then/else, dependent
// schemas), each to the next and the last to the first, or nil. The
// validator refuses every value that reaches such a cycle ("causing
// reference cycle"), so a schema with one is refused when it is stored.
// It walks the compiled graph: every subschema reachable from root, and
// the in-place edges between them. A $dynamicRef or $recursiveRef whose
// target depends on where validation came from is left to the validator.
func refCycle(root *jsonschema.Schema) []*jsonschema.Schema {
	// Every schema reachable from root, by any edge.
	all := []*jsonschema.Schema{root}
	seen := map[*jsonschema.Schema]bool{root: true}
	for i := 0; i < len(all); i++ {
		inPlace, below := schemaEdges(all[i])
		for _, t := range append(inPlace, below...) {
			if !seen[t] {
				seen[t] = true
				all = append(all, t)
			}
		}
	}
	// A depth-first search of the in-place edges alone.
	const (
		unseen = iota
		open
		done
	)
	state := make(map[*jsonschema.Schema]int, len(all))
	var stack, loop []*jsonschema.Schema
	var visit func(s *jsonschema.Schema) bool
	visit = func(s *jsonschema.Schema) bool {
		state[s] = open
		stack = append(stack, s)
		inPlace, _ := schemaEdges(s)
		for _, t := range inPlace {
			switch state[t] {
			case open:
				loop = append(slices.Clone(stack[slices.Index(stack, t):]), t)
				return true
			case unseen:
				if visit(t) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[s] = done
		return false
	}
	for _, s := range all {
		if state[s] == unseen && visit(s) {
			return loop
		}
	}
	return nil
}

// schemaEdges returns the subschemas of s that apply to the value s
// applies to (inPlace), and those that apply to values inside it or
// derived from it (below).
func schemaEdges(s *jsonschema.Schema) (inPlace, below []*jsonschema.Schema) {
	add := func(list *[]*jsonschema.Schema, xs ...*jsonschema.Schema) {
		for _, x := range xs {
			if x != nil {
				*list = append(*list, x)
			}
		}
	}
	add(&inPlace, s.Ref, s.Not, s.If, s.Then, s.Else)
	add(&inPlace, s.AllOf...)
	add(&inPlace, s.AnyOf...)
	add(&inPlace, s.OneOf...)
	if r := s.RecursiveRef; r != nil && !r.RecursiveAnchor {
		add(&inPlace, r)
	}
	if d := s.DynamicRef; d != nil && d.Ref != nil && (d.Anchor == "" || d.Ref.DynamicAnchor != d.Anchor) {
		add(&inPlace, d.Ref)
	}
	for _, k := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
		add(&inPlace, s.DependentSchemas[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		if d, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			add(&inPlace, d)
		}
	}
	if r := s.RecursiveRef; r != nil && r.RecursiveAnchor {
		add(&below, r) // walked for what it holds, not as an edge
	}
	if d := s.DynamicRef; d != nil && d.Ref != nil && d.Anchor != "" && d.Ref.DynamicAnchor == d.Anchor {
		add(&below, d.Ref)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		add(&below, s.Properties[k])
	}
	for _, p := range s.PatternProperties {
		add(&below, p)
	}
	for _, x := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch x := x.(type) {
		case *jsonschema.Schema:
			add(&below, x)
		case []*jsonschema.Schema:
			add(&below, x...)
		}
	}
	add(&below, s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	add(&below, s.PrefixItems...)
	return inPlace, below
}

// schemaError is err's message without the schema's made-up URL; for a
// schema that breaks its metaschema, the first thing wrong, with where.
func schemaError(err error) string {
	var se *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if errors.As(err, &se) && errors.As(se.Err, &ve) {
		var first *jsonschema.ValidationError
		leaves(ve, func(e *jsonschema.ValidationError) {
			if first == nil {
				first = e
			}
		})
		err = errors.New("at /" + strings.Join(first.InstanceLocation, "/") + ": " + first.ErrorKind.LocalizedString(message.NewPrinter(language.English)))
	}
	msg := err.Error()
	msg = strings.ReplaceAll(msg, schemaURL+"#", "")
	msg = strings.ReplaceAll(msg, schemaURL, "the schema")
	return msg
}

// compact returns the JSON text b without white space.
func compact(b json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b) // cannot happen: b is valid JSON
	}
	return buf.String()
}

// values returns the values a dotprompt version renders with: in.Values
// over the input's defaults; with an input schema, checked against it,
// adding an error to fe for each variable that breaks it: missing
// required, of the wrong type, or not named by the schema (unless
// in.AllowUnused, which leaves such a value out).
func (fm *frontMatter) values(in RenderInput, fe *fieldErrors) map[string]any {
	if fm == nil || len(fm.defaults) == 0 && fm.schema == nil {
		return in.Values
	}
	out := in.Values // read only, unless defaults or names to leave out make a copy
	if len(fm.defaults) > 0 {
		out = make(map[string]any, len(fm.defaults)+len(in.Values))
		maps.Copy(out, fm.defaults)
		maps.Copy(out, in.Values)
	}
	if fm.schema == nil {
		return out
	}
	if out == nil {
		out = map[string]any{} // an object to check, as with values
	}
	if fm.quick != nil && fm.quick.passes(out) {
		return out // each a property (so none to leave out), each of its type
	}
	var errs fieldErrors
	if !fm.open && !fm.allNamed(out) {
		if len(fm.defaults) == 0 && in.AllowUnused {
			out = maps.Clone(out) // some are left out below
		}
		for _, name := range sortedNames(out) {
			if _, ok := slices.BinarySearch(fm.props, name); ok {
				continue
			}
			if in.AllowUnused {
				delete(out, name)
			} else {
				errs.add("variables."+name, "is not named by the input schema")
			}
		}
	}
	if fm.quick == nil || !fm.quick.passes(out) {
		fm.schemaErrors(fm.schema.Validate(out), &errs)
	}
	// One entry a field, the first, in field order.
	slices.SortStableFunc(errs, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
	*fe = append(*fe, slices.CompactFunc(errs, func(a, b FieldError) bool { return a.Field == b.Field })...)
	return out
}

// schemaErrors adds to errs what err, the input schema's verdict on the
// values, says of them.
func (fm *frontMatter) schemaErrors(err error, errs *fieldErrors) {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		p := message.NewPrinter(language.English)
		leaves(ve, func(e *jsonschema.ValidationError) {
			if len(e.InstanceLocation) > 0 {
				detail := describe(e, p)
				if len(e.InstanceLocation) > 1 {
					detail = "at /" + strings.Join(e.InstanceLocation[1:], "/") + ": " + detail
				}
				errs.add("variables."+e.InstanceLocation[0], detail)
				return
			}
			switch k := e.ErrorKind.(type) {
			case *kind.Required:
				for _, name := range k.Missing {
					errs.add("variables."+name, "is missing: the input schema requires it")
				}
			case *kind.AdditionalProperties:
				for _, name := range k.Properties {
					errs.add("variables."+name, "is not named by the input schema")
				}
			default:
				errs.add("variables", describe(e, p))
			}
		})
	} else if err != nil {
		errs.add("variables", "cannot be checked against the input schema: "+err.Error())
	}
}

// allNamed reports whether the schema names every one of values.
func (fm *frontMatter) allNamed(values map[string]any) bool {
	for name := range values {
		if _, ok := slices.BinarySearch(fm.props, name); !ok {
			return false
		}
	}
	return true
}

// A quickSchema is an input schema of the simplest shape: an object with
// properties whose types are among string, boolean and null, or any,
// some required, no additional properties (or nothing said of them), no
// other keyword but descriptions. Values it passes, the validator passes:
// each a property of one of its types, every required one given. Any
// other values (which may break the schema) go to the validator, which
// says how.
type quickSchema struct {
	names    []string // the properties, sorted
	kinds    []uint8  // the kinds of values each takes
	required []bool   // whether each is required
	// nRequired is how many names are required (each once, as JSON
	// Schema has them), properties or not: values pass when they give
	// that many required properties (a required name that is no
	// property is never given).
	nRequired int
}

const (
	quickString uint8 = 1 << iota
	quickBool
	quickNull
	quickAny = quickString | quickBool | quickNull | 1<<7
)

// newQuickSchema returns doc's quickSchema, or nil when doc has another
// shape.
func newQuickSchema(doc map[string]any) *quickSchema {
	kindOf := map[string]uint8{}
	var required []string
	for k, v := range doc {
		switch k {
		case "type":
			if v != "object" {
				return nil
			}
		case "additionalProperties":
			if v != false {
				return nil
			}
		case "description":
		case "required":
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, r := range list {
				name, ok := r.(string)
				if !ok {
					return nil
				}
				required = append(required, name)
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, p := range props {
				kinds, ok := quickKinds(p)
				if !ok {
					return nil
				}
				kindOf[name] = kinds
			}
		default:
			return nil
		}
	}
	q := &quickSchema{names: slices.Sorted(maps.Keys(kindOf))}
	for _, name := range q.names {
		q.kinds = append(q.kinds, kindOf[name])
		q.required = append(q.required, slices.Contains(required, name))
	}
	q.nRequired = len(required)
	return q
}

// quickKinds returns the kinds of values a property schema p takes, when
// it says nothing but its type (among string, boolean and null, or none
// for any) and a description.
func quickKinds(p any) (uint8, bool) {
	m, ok := p.(map[string]any)
	if !ok {
		return 0, false
	}
	kinds := quickAny
	for k, v := range m {
		switch k {
		case "description":
		case "type":
			types, ok := v.([]any)
			if !ok {
				types = []any{v}
			}
			kinds = 0
			for _, t := range types {
				switch t {
				case "string":
					kinds |= quickString
				case "boolean":
					kinds |= quickBool
				case "null":
					kinds |= quickNull
				default:
					return 0, false
				}
			}
		default:
			return 0, false
		}
	}
	return kinds, true
}

// passes reports whether values obviously pass the schema: false says
// only that the validator must judge them.
func (q *quickSchema) passes(values map[string]any) bool {
	if len(values) > len(q.names) {
		return false // one at least is no property
	}
	given := 0 // required properties given
	if len(q.names) <= 2*len(values)+2 {
		// About as many properties as values: look each property up,
		// which costs less than walking the map and searching the names.
		found := 0
		for i, name := range q.names {
			v, ok := values[name]
			if !ok {
				continue
			}
			found++
			if q.required[i] {
				given++
			}
			if !q.takes(i, v) {
				return false
			}
		}
		return found == len(values) && given == q.nRequired
	}
	for name, v := range values {
		i, ok := slices.BinarySearch(q.names, name)
		if !ok {
			return false
		}
		if q.required[i] {
			given++
		}
		if !q.takes(i, v) {
			return false
		}
	}
	return given == q.nRequired
}

// takes reports whether property i takes the value v.
func (q *quickSchema) takes(i int, v any) bool {
	kinds := q.kinds[i]
	if kinds == quickAny {
		return true
	}
	var kind uint8
	switch v.(type) {
	case string:
		kind = quickString
	case bool:
		kind = quickBool
	case nil:
		kind = quickNull
	}
	return kinds&kind != 0
}

// leaves calls f with each error of e's tree that has no causes.
func leaves(e *jsonschema.ValidationError, f func(*jsonschema.ValidationError)) {
	if len(e.Causes) == 0 {
		f(e)
		return
	}
	for _, c := range e.Causes {
		leaves(c, f)
	}
}

// describe says what is wrong with a value, as a field error's detail.
func describe(e *jsonschema.ValidationError, p *message.Printer) string {
	if k, ok := e.ErrorKind.(*kind.Type); ok {
		return fmt.Sprintf("must be %s, not %s", strings.Join(k.Want, " or "), k.Got)
	}
	return "breaks the input schema: " + schemaError(errors.New(e.ErrorKind.LocalizedString(p)))
}
