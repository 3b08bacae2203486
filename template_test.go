package prompts_test

import (
	"errors"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

func TestVariables(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    []string
	}{
		{"", []string{}},
		{"no variables", []string{}},
		{"Hello {{name}}!", []string{"name"}},
		{"{{ name }} and {{  name}} and {{name   }}", []string{"name"}},          // spaces inside, each once
		{"{{b}} {{a}} {{_x}} {{B}} {{a1}}", []string{"B", "_x", "a", "a1", "b"}}, // sorted by code point
		{"{{\tname}} {{name\n}} {{\u00a0name}}", []string{}},                     // only U+0020 counts as space
		{"{{1x}} {{x-y}} {{x.y}} {{}} {{ }} {{x y}}", []string{}},                // not names
		{"{{é}} {{naïve}} {{x}}é", []string{"x"}},                                // ASCII names only; Unicode around is text
		{"é{{x}}ü{{y}}", []string{"x", "y"}},
		{"{{x}}{{y}}", []string{"x", "y"}}, // adjacent
		{"{{{x}}}", []string{"x"}},         // the inner braces
		{"{{{{x}}}}", []string{"x"}},       // nested
		{"{{ {{x}} }}", []string{"x"}},     // a variable inside text braces
		{"{{x}", []string{}},               // unclosed
		{"{x}} {{x} }", []string{}},        // not braces enough
		{"{{x}}}", []string{"x"}},          // one brace too many after
		{"{{x}}{{", []string{"x"}},         // a dangling opening
		{"{{_}} {{__init__}}", []string{"_", "__init__"}},
		{strings.Repeat("{{v}}", 1000), []string{"v"}},
	} {
		got := prompts.Variables(tc.content)
		if !slices.Equal(got, tc.want) || got == nil {
			t.Errorf("Variables(%q) = %#v, want %#v", tc.content, got, tc.want)
		}
	}
}

func TestRender(t *testing.T) {
	is := is.New(t)
	v := prompts.PromptVersion{Content: "Hi {{ name }}, welcome to {{place}}. {{name}}!"}
	v.Variables = prompts.Variables(v.Content)
	text, err := v.Render(map[string]string{"name": "Ada", "place": "{{name}}"})
	is.NoErr(err)
	is.Equal(text, "Hi Ada, welcome to {{name}}. Ada!") // one pass: a value is inserted as it is

	_, err = v.Render(map[string]string{"name": "Ada", "extra": "x", "another": "y"})
	is.True(errors.Is(err, prompts.ErrInvalid)) // missing and unused
	var e *prompts.Error
	is.True(errors.As(err, &e))
	is.Equal(e.Fields, []prompts.FieldError{
		{Field: "variables.another", Detail: "is not used by this version"},
		{Field: "variables.extra", Detail: "is not used by this version"},
		{Field: "variables.place", Detail: "is missing: the version uses it"},
	}) // every one, in name order

	text, err = v.Render(map[string]string{"name": "Ada", "place": "here", "extra": "x"}, prompts.AllowUnused())
	is.NoErr(err) // unused values allowed
	is.Equal(text, "Hi Ada, welcome to here. Ada!")
	_, err = v.Render(map[string]string{"name": "Ada"}, prompts.AllowUnused())
	is.True(errors.Is(err, prompts.ErrInvalid)) // missing ones still refused

	plain := prompts.PromptVersion{Content: "{{ not a variable }} {x}"}
	text, err = plain.Render(nil)
	is.NoErr(err)
	is.Equal(text, plain.Content) // no variables: the content as it is
	text, err = prompts.PromptVersion{Content: "{{a}}{{b}}"}.Render(map[string]string{"a": "", "b": "2"})
	is.NoErr(err) // Variables computed when not stored
	is.Equal(text, "2")
}

func TestDiffVariables(t *testing.T) {
	is := is.New(t)
	is.True(!prompts.DiffVariables([]string{"a", "b"}, []string{"a", "b"}).Changed())
	is.True(!prompts.DiffVariables([]string{}, nil).Changed())
	c := prompts.DiffVariables([]string{"a", "b", "c"}, []string{"b", "d"})
	is.Equal(c.Added, []string{"d"})
	is.Equal(c.Removed, []string{"a", "c"})
	err := prompts.VariablesChanged(c)
	is.True(errors.Is(err, prompts.ErrVariablesChanged))
	is.True(strings.Contains(err.Error(), "added: d"))
	is.True(strings.Contains(err.Error(), "removed: a, c"))
}

// variableRe is the grammar of a variable, as a regular expression: the
// reference the hand-written scanner is checked against.
var variableRe = regexp.MustCompile(`\{\{ *([A-Za-z_][A-Za-z0-9_]*) *\}\}`)

// FuzzRender: rendering never panics; it replaces exactly what the
// regular expression finds; and, with a value for every variable and no
// braces in the values, the text holds none of the version's variables.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"Hi {{name}}", "{{{x}}}", "{{ a }}{{b}}", "{{ {{x}} }}", "é{{x}}ü", "{{", "}}{{x", ""} {
		f.Add(s, "value")
	}
	f.Fuzz(func(t *testing.T, content, value string) {
		value = "#" + strings.NewReplacer("{", "", "}", "").Replace(value) // no braces, and no name can start in it
		vars := prompts.Variables(content)
		var ref []string
		for _, m := range variableRe.FindAllStringSubmatch(content, -1) {
			if !slices.Contains(ref, m[1]) {
				ref = append(ref, m[1])
			}
		}
		slices.Sort(ref)
		if !slices.Equal(vars, ref) && !(len(vars) == 0 && len(ref) == 0) {
			t.Fatalf("Variables(%q) = %q, the expression finds %q", content, vars, ref)
		}
		values := map[string]string{}
		for _, n := range vars {
			values[n] = value
		}
		text, err := prompts.PromptVersion{Content: content}.Render(values)
		if err != nil {
			t.Fatalf("Render(%q): %v", content, err)
		}
		if want := variableRe.ReplaceAllLiteralString(content, value); text != want {
			t.Fatalf("Render(%q) = %q, want %q", content, text, want)
		}
		for _, n := range prompts.Variables(text) {
			if slices.Contains(vars, n) {
				t.Fatalf("Render(%q) = %q: still holds {{%s}}", content, text, n)
			}
		}
		_, _ = prompts.PromptVersion{Content: content}.Render(map[string]string{"x": content}) // may refuse, never panics
	})
}

// BenchmarkRender renders a prompt of 2 KiB with 10 variables.
func BenchmarkRender(b *testing.B) {
	var sb strings.Builder
	values := map[string]string{}
	for i := 0; sb.Len() < 2048-60; i++ {
		name := "var_" + string(rune('a'+i%10))
		values[name] = "a value of some length"
		sb.WriteString("Some instructions for the model, then {{ " + name + " }}. ")
	}
	v := prompts.PromptVersion{Content: sb.String()}
	v.Variables = prompts.Variables(v.Content)
	if len(v.Variables) != 10 {
		b.Fatalf("%d variables", len(v.Variables))
	}
	b.SetBytes(int64(len(v.Content)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Render(values); err != nil {
			b.Fatal(err)
		}
	}
}

// Variables stays linear in the number of names, and Render trusts the
// content over a Variables list that does not match it.
func TestVariablesAtScale(t *testing.T) {
	is := is.New(t)
	var b strings.Builder
	for i := range 100000 {
		b.WriteString("{{v" + strconv.Itoa(i) + "}}")
	}
	// A quadratic Variables took minutes here (past go test's timeout);
	// BenchmarkVariables measures it.
	vars := prompts.Variables(b.String())
	is.Equal(len(vars), 100000)
	_, err := prompts.PromptVersion{Content: "Hi {{name}} {{x}}", Variables: []string{"name"}}.Render(map[string]string{"name": "A"})
	is.True(errors.Is(err, prompts.ErrInvalid)) // x is missing, listed or not
}

// BenchmarkVariables extracts the variables of a 1 MiB body of 100,000
// distinct names, the most a request may send.
func BenchmarkVariables(b *testing.B) {
	var sb strings.Builder
	for i := range 100000 {
		sb.WriteString("{{v" + strconv.Itoa(i) + "}}")
	}
	content := sb.String()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		prompts.Variables(content)
	}
}

// A render whose text would pass MaxRenderSize is refused, naming both
// sizes, without building the text: a 10 KB value for a variable used
// 200,000 times (2 GB) costs next to nothing.
func TestRenderSizeLimit(t *testing.T) {
	is := is.New(t)
	v := prompts.PromptVersion{Content: strings.Repeat("{{a}}", 200000), Variables: []string{"a"}}
	values := map[string]string{"a": strings.Repeat("x", 10240)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := v.Render(values)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	is.True(errors.Is(err, prompts.ErrInvalid)) // refused
	var e *prompts.Error
	is.True(errors.As(err, &e))
	is.Equal(len(e.Fields), 1)
	is.Equal(e.Fields[0].Field, "variables")
	is.True(strings.Contains(e.Fields[0].Detail, "2048000000 bytes"))                           // the size it would have
	is.True(strings.Contains(e.Fields[0].Detail, strconv.Itoa(prompts.MaxRenderSize)+" bytes")) // and the limit
	is.True(after.TotalAlloc-before.TotalAlloc < 64<<10)                                        // nothing built
	is.True(elapsed < time.Second)                                                              // quickly

	at := prompts.PromptVersion{Content: "<{{a}}>"}
	text, err := at.Render(map[string]string{"a": strings.Repeat("x", prompts.MaxRenderSize-2)})
	is.NoErr(err) // exactly the limit
	is.Equal(len(text), prompts.MaxRenderSize)
	_, err = at.Render(map[string]string{"a": strings.Repeat("x", prompts.MaxRenderSize-1)})
	is.True(errors.Is(err, prompts.ErrInvalid)) // one byte over
}

func TestRenderRequestValidate(t *testing.T) {
	id := "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	vars := map[string]any{}
	for _, tc := range []struct {
		name   string
		in     prompts.RenderRequest
		fields []string // nil: valid
		target prompts.Environment
	}{
		{"neither: production", prompts.RenderRequest{PromptID: id, Variables: vars}, nil, prompts.Production},
		{"an environment", prompts.RenderRequest{PromptID: id, Environment: prompts.Some(prompts.Staging), Variables: vars}, nil, prompts.Staging},
		{"a number", prompts.RenderRequest{PromptID: id, VersionNumber: prompts.Some(2), Variables: vars}, nil, ""},
		{"null for both", prompts.RenderRequest{PromptID: id, Environment: prompts.Null[prompts.Environment](), VersionNumber: prompts.Null[int](), Variables: vars}, nil, prompts.Production},
		{"null environment, a number", prompts.RenderRequest{PromptID: id, Environment: prompts.Null[prompts.Environment](), VersionNumber: prompts.Some(1), Variables: vars}, nil, ""},
		{"both", prompts.RenderRequest{PromptID: id, Environment: prompts.Some(prompts.Staging), VersionNumber: prompts.Some(2), Variables: vars}, []string{"environment"}, ""},
		{"a malformed environment", prompts.RenderRequest{PromptID: id, Environment: prompts.Some(prompts.Environment("Dev")), Variables: vars}, []string{"environment"}, ""},
		{"an empty environment", prompts.RenderRequest{PromptID: id, Environment: prompts.Some(prompts.Environment("")), Variables: vars}, []string{"environment"}, ""},
		{"number 0", prompts.RenderRequest{PromptID: id, VersionNumber: prompts.Some(0), Variables: vars}, []string{"version_number"}, ""},
		{"no variables", prompts.RenderRequest{PromptID: id}, []string{"variables"}, ""},
		{"no prompt", prompts.RenderRequest{Variables: vars}, []string{"prompt_id"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := tc.in.Validate()
			if tc.fields == nil {
				is.NoErr(err)
				is.Equal(tc.in.Target(), tc.target)
				return
			}
			var e *prompts.Error
			is.True(errors.As(err, &e)) // invalid
			var got []string
			for _, f := range e.Fields {
				got = append(got, f.Field)
			}
			is.Equal(got, tc.fields)
		})
	}
}
