package prompts_test

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// detailsOf returns err's entries as "field: detail".
func detailsOf(err error) []string {
	var e *prompts.Error
	if !errors.As(err, &e) {
		return nil
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field+": "+f.Detail)
	}
	return out
}

func TestVersionSignature(t *testing.T) {
	is := is.New(t)
	const tmpl = "{{#if x}}{{y.z}}{{/if}}"
	sig, err := prompts.VersionSignature(prompts.FormatDotprompt, tmpl, "")
	is.NoErr(err)
	is.Equal(sig, prompts.Signature{Variables: []string{"x", "y"}, Inputs: []string{}}) // no schema: the names the template reads

	md := prompts.Metadata(`{"model":"m","input":{"schema":{"name":"string","age?":"integer, in years","tags(array)":"string","mood(enum)":["a","b"]}}}`)
	sig, err = prompts.VersionSignature(prompts.FormatDotprompt, tmpl, md)
	is.NoErr(err)
	is.Equal(sig.Variables, []string{"age", "mood", "name", "tags"}) // the schema's properties
	is.Equal(sig.Inputs, []string{"age\tinteger|null\toptional\t{\"type\":[\"integer\",\"null\"]}", "mood\tenum\trequired\t{\"enum\":[\"a\",\"b\"]}",
		"name\tstring\trequired\t{\"type\":\"string\"}", "tags\tarray\trequired\t{\"items\":{\"type\":\"string\"},\"type\":\"array\"}"}) // descriptions left out

	md = `{"input":{"schema":{"type":"object","properties":{"q":{"type":["null","string"]},"n":{}},"required":["q"]}}}`
	sig, err = prompts.VersionSignature(prompts.FormatDotprompt, tmpl, md) // JSON Schema
	is.NoErr(err)
	is.Equal(sig.Inputs, []string{"n\tany\toptional\t{}", "q\tstring|null\trequired\t{\"type\":[\"null\",\"string\"]}"})

	sig, err = prompts.VersionSignature(prompts.FormatPlain, "{{a}}", `{"config":1}`)
	is.NoErr(err) // a plain version's metadata_ is free-form
	is.Equal(sig, prompts.Signature{Variables: []string{"a"}, Inputs: []string{}})
}

func TestVersionSignatureRefusesWrongShapes(t *testing.T) {
	is := is.New(t)
	_, err := prompts.VersionSignature(prompts.FormatDotprompt, "{{/if}}", `{"model":1,"config":[],"tools":["a",2],"metadata":"x",`+
		`"output":{"format":3,"schema":{"a":"nosuchtype"}},"input":{"default":[],"schema":"string"},"ns.key":[1],"other":1}`)
	is.True(errors.Is(err, prompts.ErrInvalid))
	is.Equal(fieldsOf(err), []string{"content", "metadata_.model", "metadata_.config", "metadata_.metadata", "metadata_.tools",
		"metadata_.output.format", "metadata_.output.schema", "metadata_.input.default", "metadata_.input.schema"}) // all at once; extensions and other keys as they are
	d := detailsOf(err)
	is.Equal(d[2], "metadata_.config: must be an object")
	is.True(strings.HasPrefix(d[6], "metadata_.output.schema: does not compile: "))
	is.True(strings.Contains(d[6], "nosuchtype")) // naming what is wrong
	is.True(strings.Contains(d[8], `must describe an object`))

	for _, md := range []prompts.Metadata{
		`{"input":{"schema":{"type":"object","properties":{"a":{"type":"strin"}}}}}`,
		`{"input":{"schema":{"type":"object","properties":{"a":{"minLength":-1}}}}}`,
		`{"input":{"schema":{"type":"object","properties":{"a":{"pattern":"("}}}}}`,
		`{"input":{"schema":3}}`,
		`{"input":{"schema":null}}`,
	} {
		_, err := prompts.VersionSignature(prompts.FormatDotprompt, "x", md)
		is.Equal(fieldsOf(err), []string{"metadata_.input.schema"})      // md
		is.True(strings.Contains(detailsOf(err)[0], "does not compile")) // md
	}
	_, err = prompts.VersionSignature(prompts.FormatDotprompt, "x", `{"name":"n","model":"m","description":"d","prompts.format":"plain","prompts.x":1,"promptsx.y":1}`)
	is.Equal(fieldsOf(err), []string{"metadata_.description", "metadata_.name", "metadata_.prompts.format", "metadata_.prompts.x"}) // the prompt's, or the file format's: export could not write them
	is.True(strings.HasPrefix(detailsOf(err)[1], "metadata_.name: is the prompt's name, not a setting: "))
	_, err = prompts.VersionSignature(prompts.FormatPlain, "x", `{"name":"n","prompts.format":"plain"}`)
	is.NoErr(err) // a plain version's metadata_ is free-form
	_, err = prompts.VersionSignature(prompts.FormatDotprompt, "x", `{"input":"x","output":[]}`)
	is.Equal(detailsOf(err), []string{"metadata_.output: must be an object", "metadata_.input: must be an object"})
	_, err = prompts.VersionSignature(prompts.FormatDotprompt, "x", `{"input":{"default":{"b":1},"schema":{"a":"string"}}}`)
	is.Equal(detailsOf(err), []string{"metadata_.input.default.b: is not a property of the input schema"})

	// A default the schema refuses would fail every render that does not
	// give the value: refused when stored, naming it.
	_, err = prompts.VersionSignature(prompts.FormatDotprompt, "x", `{"input":{"default":{"a":"notint","e":"z","t":[1,"x"],"s":"ok"},"schema":{"a":"integer","e(enum)":["x","y"],"t(array)":"integer","s":"string","r":"string"}}}`)
	is.Equal(detailsOf(err), []string{"metadata_.input.default.a: must be integer, not string", "metadata_.input.default.e: breaks the input schema: value must be one of 'x', 'y'",
		"metadata_.input.default.t: at /1: must be integer, not string"}) // one each; r, required, need not have a default
	_, err = prompts.VersionSignature(prompts.FormatDotprompt, "x", `{"input":{"default":{"a":1,"s":"ok"},"schema":{"a":"integer","s":"string","r":"string"}}}`)
	is.NoErr(err)

	// A version stored before these checks keeps rendering as it did.
	old := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: "{{a}}",
		Metadata: `{"name":"n","prompts.format":"dotprompt","input":{"default":{"a":"notint"},"schema":{"a":"integer"}}}`}
	out, err := old.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"a": 1}})
	is.NoErr(err)
	is.Equal(out.Text, "1")
}

// A schema whose references go round without reaching a value fails
// every render: it is refused when stored, naming the key.
func TestVersionSignatureRefusesReferenceCycles(t *testing.T) {
	is := is.New(t)
	for _, schema := range []string{
		`{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		`{"type":"object","$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/b"}}}`,
		`{"type":"object","properties":{"x":{"not":{"$ref":"#/properties/x"}}}}`,
	} {
		for _, key := range []string{"input", "output"} {
			_, err := prompts.VersionSignature(prompts.FormatDotprompt, "x", prompts.Metadata(`{"`+key+`":{"schema":`+schema+`}}`))
			is.Equal(fieldsOf(err), []string{"metadata_." + key + ".schema"}) // schema
			is.True(strings.Contains(detailsOf(err)[0], "reference cycle"))   // schema
		}
	}
	// Recursion through a value inside is no cycle: each step goes one level down.
	for _, schema := range []string{
		`{"type":"object","$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}},"properties":{"x":{"$ref":"#/$defs/node"}}}`,
		`{"type":"object","properties":{"x":{"type":"array","items":{"$ref":"#"}}}}`,
		`{"type":"object","properties":{"x":{"$ref":"#/$defs/s"},"y":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`,
	} {
		sig, err := prompts.VersionSignature(prompts.FormatDotprompt, "x", prompts.Metadata(`{"input":{"schema":`+schema+`}}`))
		is.NoErr(err) // schema
		is.Equal(sig.Variables[0], "x")
	}
}

// A schema never loads a document it refers to: no I/O.
func TestSchemaLoadsNothing(t *testing.T) {
	is := is.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	for _, ref := range []string{"http://" + ln.Addr().String() + "/s.json", "other.json", "file:///etc/passwd"} {
		md := prompts.Metadata(`{"input":{"schema":{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}}}`)
		_, err = prompts.VersionSignature(prompts.FormatDotprompt, "x", md)
		is.Equal(fieldsOf(err), []string{"metadata_.input.schema"}) // ref
		is.True(strings.Contains(detailsOf(err)[0], "nothing is loaded"))
	}
	ln.Close() // Accept returns; had it accepted, the channel would hold it
	select {
	case <-accepted:
		t.Fatal("the schema's $ref was fetched")
	default:
	}
}

func TestRenderWithInputSchema(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	v := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt,
		Content:  `{{name}} is {{age}}{{#each tags}} #{{this}}{{/each}}{{#if loud}}!{{/if}}`,
		Metadata: `{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.2},"output":{"format":"json","schema":{"ok":"boolean"}},"input":{"default":{"age":40},"schema":{"name":"string","age":"integer","tags?(array)":"string","loud?":"boolean","pos?(object)":{"x":"number"}}}}`}
	tmpl, err := prompts.ParseTemplate(v)
	is.NoErr(err)
	out, err := tmpl.Render(ctx, prompts.RenderInput{Values: map[string]any{"name": "Ada", "tags": []any{"a", "b"}}})
	is.NoErr(err)
	is.Equal(out.Text, "Ada is 40 #a #b") // the default applied
	is.Equal(out.Model, "googleai/gemini-2.5-flash")
	is.Equal(out.Config, `{"temperature":0.2}`)
	is.Equal(out.Output, `{"format":"json","schema":{"ok":"boolean"}}`)
	out, err = tmpl.Render(ctx, prompts.RenderInput{Values: map[string]any{"name": "Ada", "age": 7}})
	is.NoErr(err)
	is.Equal(out.Text, "Ada is 7") // a value given over the default; Go ints are integers

	_, err = tmpl.Render(ctx, prompts.RenderInput{Values: map[string]any{"age": "old", "zz": 1, "tags": []any{"a", true}, "loud": nil, "pos": map[string]any{"x": "1"}}})
	is.True(errors.Is(err, prompts.ErrInvalid))
	is.Equal(fieldsOf(err), []string{"variables.age", "variables.name", "variables.pos", "variables.tags", "variables.zz"}) // one each, in name order; an optional value may be null
	d := detailsOf(err)
	is.Equal(d[0], "variables.age: must be integer, not string")
	is.Equal(d[1], "variables.name: is missing: the input schema requires it")
	is.Equal(d[2], "variables.pos: at /x: must be number, not string")
	is.Equal(d[3], "variables.tags: at /1: must be string, not boolean")
	is.Equal(d[4], "variables.zz: is not named by the input schema")

	out, err = tmpl.Render(ctx, prompts.RenderInput{Values: map[string]any{"name": "Ada", "zz": 1}, AllowUnused: true})
	is.NoErr(err) // allowed: left out
	is.Equal(out.Text, "Ada is 40")

	open := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: "{{a}}{{b}}",
		Metadata: `{"input":{"schema":{"a":"string","(*)":"integer"}}}`}
	tmpl, err = prompts.ParseTemplate(open)
	is.NoErr(err)
	out, err = tmpl.Render(ctx, prompts.RenderInput{Values: map[string]any{"a": "x", "b": 2}})
	is.NoErr(err) // named by additionalProperties
	is.Equal(out.Text, "x2")
	_, err = tmpl.Render(ctx, prompts.RenderInput{Values: map[string]any{"a": "x", "b": "y"}})
	is.Equal(detailsOf(err), []string{"variables.b: must be integer, not string"})
}

func TestRenderWithoutSchemaAppliesDefaults(t *testing.T) {
	is := is.New(t)
	v := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: "{{a}}-{{b}}", Metadata: `{"input":{"default":{"a":"A","b":"B"}}}`}
	out, err := v.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"b": "x"}})
	is.NoErr(err)
	is.Equal(out.Text, "A-x")
	is.Equal(out.Model, "") // absent
	is.Equal(out.Config, "")
	_, err = prompts.ParseTemplate(prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: "x", Metadata: `{"config":1}`})
	is.Equal(fieldsOf(err), []string{"metadata_.config"}) // a version built by hand is checked as a stored one
	plain, err := prompts.PromptVersion{Content: "{{a}}", Metadata: `{"config":1,"input":{"default":{"a":"A"}}}`}.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"a": "x"}})
	is.NoErr(err) // a plain version has no front matter
	is.Equal(plain.Text, "x")
	is.Equal(plain.Config, "")
}

func TestDiffSignatures(t *testing.T) {
	is := is.New(t)
	sig := func(md prompts.Metadata) prompts.Signature {
		t.Helper()
		s, err := prompts.VersionSignature(prompts.FormatDotprompt, "{{a}}{{b}}", md)
		is.NoErr(err)
		return s
	}
	base := sig(`{"input":{"schema":{"a":"string","b?":"string"}}}`)
	is.True(!prompts.DiffSignatures(base, sig(`{"input":{"schema":{"b?":"string, another description","a":"string"}}}`)).Changed()) // the same inputs
	c := prompts.DiffSignatures(base, sig(`{"input":{"schema":{"a":"integer","b":"string","c":"string"}}}`))
	is.Equal(c.Added, []string{"c"})
	is.Equal(c.Inputs, []prompts.InputChange{
		{Name: "a", FromType: "string", ToType: "integer", FromRequired: true, ToRequired: true, FromSchema: `{"type":"string"}`, ToSchema: `{"type":"integer"}`},
		{Name: "b", FromType: "string|null", ToType: "string", ToRequired: true, FromSchema: `{"type":["string","null"]}`, ToSchema: `{"type":"string"}`},
	})
	err := prompts.VariablesChanged(c)
	is.True(errors.Is(err, prompts.ErrVariablesChanged))
	is.Equal(detailsOf(err), []string{"variables.c: is added", "variables.a: changes type from string to integer",
		"variables.b: changes type from string|null to string and becomes required"})
	is.True(strings.Contains(err.Error(), "changed in the input schema: a, b"))

	none := sig("") // no schema: a and b untyped
	c = prompts.DiffSignatures(none, base)
	is.Equal(detailsOf(prompts.VariablesChanged(c)), []string{"variables.a: is given the type string by the input schema and becomes required", "variables.b: is given the type string|null by the input schema"})
	c = prompts.DiffSignatures(base, none)
	is.Equal(detailsOf(prompts.VariablesChanged(c)), []string{"variables.a: is no longer typed by an input schema (it was string)", "variables.b: is no longer typed by an input schema (it was string|null)"})
	c = prompts.DiffSignatures(sig(`{"input":{"schema":{"a":"string","b":"string"}}}`), base)
	is.Equal(detailsOf(prompts.VariablesChanged(c)), []string{"variables.b: changes type from string to string|null and is no longer required"})
	plain, err := prompts.VersionSignature(prompts.FormatPlain, "{{a}}{{b}}", "")
	is.NoErr(err)
	is.True(!prompts.DiffSignatures(plain, none).Changed()) // neither has a schema: the variables alone
}

// The promotion guard compares each property's whole schema: what it
// accepts, inside arrays and objects too, and not its descriptions.
func TestDiffSignaturesComparesWholeSchemas(t *testing.T) {
	is := is.New(t)
	sig := func(schema string) prompts.Signature {
		t.Helper()
		s, err := prompts.VersionSignature(prompts.FormatDotprompt, "x", prompts.Metadata(`{"input":{"schema":`+schema+`}}`))
		is.NoErr(err)
		return s
	}
	base := sig(`{"tags(array)":"string","o(object)":{"a":"string"},"e(enum)":["x","y"]}`)
	is.True(!prompts.DiffSignatures(base, sig(`{"e(enum, the mood)":["x","y"],"o(object, a thing)":{"a":"string, its a"},"tags(array)":"string"}`)).Changed()) // descriptions only
	for schema, want := range map[string]string{
		`{"tags(array)":"integer","o(object)":{"a":"string"},"e(enum)":["x","y"]}`: `variables.tags: changes its schema from {"items":{"type":"string"},"type":"array"} to {"items":{"type":"integer"},"type":"array"}`,
		`{"tags(array)":"string","o(object)":{"a":"integer"},"e(enum)":["x","y"]}`: `variables.o: changes its schema from {"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"} to {"additionalProperties":false,"properties":{"a":{"type":"integer"}},"required":["a"],"type":"object"}`,
		`{"tags(array)":"string","o(object)":{"a?":"string"},"e(enum)":["x","y"]}`: `variables.o: changes its schema from {"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"} to {"additionalProperties":false,"properties":{"a":{"type":["string","null"]}},"type":"object"}`,
		`{"tags(array)":"string","o(object)":{"a":"string"},"e(enum)":["x","z"]}`:  `variables.e: changes its schema from {"enum":["x","y"]} to {"enum":["x","z"]}`,
	} {
		is.Equal(detailsOf(prompts.VariablesChanged(prompts.DiffSignatures(base, sig(schema)))), []string{want}) // schema
	}
	long := sig(`{"tags(array)":"string","o(object)":{"a":"string","b":"string","c":"string","d":"string","e":"string","f":"integer"},"e(enum)":["x","y"]}`)
	longer := sig(`{"tags(array)":"string","o(object)":{"a":"string","b":"string","c":"string","d":"string","e":"string","f":"string"},"e(enum)":["x","y"]}`)
	is.Equal(detailsOf(prompts.VariablesChanged(prompts.DiffSignatures(long, longer))), []string{"variables.o: changes its schema"}) // too long to quote

	// A $ref: what it points to counts.
	refs := sig(`{"type":"object","$defs":{"t":{"type":"string","description":"a t"}},"properties":{"x":{"$ref":"#/$defs/t"}}}`)
	is.True(!prompts.DiffSignatures(refs, sig(`{"type":"object","$defs":{"t":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/t"}}}`)).Changed())
	is.True(prompts.DiffSignatures(refs, sig(`{"type":"object","$defs":{"t":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/t"}}}`)).Changed())

	// An entry stored by an earlier release has no schema: compared with
	// one, the type and requiredness alone count, as they did then.
	old := prompts.Signature{Variables: base.Variables, Inputs: []string{"e\tenum\trequired", "o\tobject\trequired", "tags\tarray\trequired"}}
	is.True(!prompts.DiffSignatures(old, base).Changed())
	is.True(!prompts.DiffSignatures(base, old).Changed())
	is.Equal(detailsOf(prompts.VariablesChanged(prompts.DiffSignatures(old, sig(`{"tags(array)":"string","o?(object)":{"a":"string"},"e(enum)":["x","y"]}`)))),
		[]string{"variables.o: changes type from object to object|null and is no longer required"})
}

// A Template with an input schema is safe for concurrent use: its schema
// and defaults are shared, never written.
func TestRenderWithInputSchemaConcurrently(t *testing.T) {
	is := is.New(t)
	tmpl, err := prompts.ParseTemplate(prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: "{{a}}{{b}}",
		Metadata: `{"input":{"default":{"b":"B"},"schema":{"a":"string","b?":"string"}}}`})
	is.NoErr(err)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			values := map[string]any{"a": strconv.Itoa(i)}
			if i%2 == 1 {
				values["a"] = i // wrong type
			}
			out, err := tmpl.Render(t.Context(), prompts.RenderInput{Values: values})
			if err == nil && out.Text != strconv.Itoa(i)+"B" {
				err = errors.New("rendered " + out.Text)
			}
			if i%2 == 1 && err != nil && fieldsOf(err)[0] == "variables.a" {
				err = nil
			} else if i%2 == 1 {
				err = errors.New("a wrong type was not refused")
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		is.NoErr(err)
	}
}

// A render reads the caller's values without changing them, even when
// AllowUnused leaves some out of a schema without defaults.
func TestRenderLeavesTheValuesAsTheyWere(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	tmpl, err := prompts.ParseTemplate(prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: "Hi {{name}}",
		Metadata: `{"input":{"schema":{"name":"string"}}}`})
	is.NoErr(err)
	values := map[string]any{"name": "Ada", "zz": "extra"}
	out, err := tmpl.Render(ctx, prompts.RenderInput{Values: values, AllowUnused: true})
	is.NoErr(err)
	is.Equal(out.Text, "Hi Ada")                                   // rendered, zz left out
	is.Equal(values, map[string]any{"name": "Ada", "zz": "extra"}) // the caller's map as it was
	_, err = tmpl.Render(ctx, prompts.RenderInput{Values: values})
	is.Equal(fieldsOf(err), []string{"variables.zz"}) // still there to refuse
	out, err = tmpl.Render(ctx, prompts.RenderInput{Values: map[string]any{"name": "Bo"}})
	is.NoErr(err)
	is.Equal(out.Text, "Hi Bo") // the quick check's common case
}
