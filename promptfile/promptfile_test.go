package promptfile_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/matryer/is"
	"go.yaml.in/yaml/v3"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/dotprompt"
	"github.com/promptkit/prompts/promptfile"
)

func ptr(s string) *string { return &s }

// sameFile reports whether two files hold the same prompt: the same
// fields, metadata as the same JSON value.
func sameFile(a, b promptfile.File) bool {
	if a.Name != b.Name || a.Template != b.Template || (a.Description == nil) != (b.Description == nil) {
		return false
	}
	if a.Description != nil && *a.Description != *b.Description {
		return false
	}
	return sameJSON(string(a.Metadata), string(b.Metadata))
}

func sameJSON(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	decode := func(s string) any {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber() // numbers compared by their text
		var v any
		if err := dec.Decode(&v); err != nil {
			return err.Error()
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// Every file Format writes, Parse reads back as it was, and writing that
// again gives the same bytes.
func TestRoundTrip(t *testing.T) {
	files := map[string]promptfile.File{
		"everything": {Name: "Support greeting", Description: ptr("Greets a customer.\nTwo lines.\n"),
			Metadata: `{"model":"gpt-5","temperature":0.20,"tools":[{"name":"search","strict":true},null],"big":1e400,"long":12345678901234567890123456789,"neg":-0.0e-7}`,
			Template: "Hello {{name}}.\n"},
		"template with lines of dashes": {Name: "n", Template: "---\nnot front matter\n---\n---\n"},
		"no trailing newline":           {Name: "n", Template: "Hello"},
		"several trailing newlines":     {Name: "n", Template: "Hello\n\n\n"},
		"only newlines":                 {Name: "n", Template: "\n\n"},
		"CRLF":                          {Name: "n", Description: ptr("a\r\nb"), Template: "line one\r\nline two\r\n---\r\n"},
		"Unicode":                       {Name: "Grüße 日本 🙂", Description: ptr("\u2028\u0085\ufeff"), Metadata: `{"ключ":"значение","emoji":"🙂"}`, Template: "Grüß {{name}} 🙂\u2028\ufeff"},
		"empty metadata object":         {Name: "n", Metadata: `{}`, Template: "x"},
		"null metadata":                 {Name: "n", Template: "x"},
		"empty description":             {Name: "n", Description: ptr(""), Template: "x"},
		"no name":                       {Template: "x"},
		"strings YAML would read as other things": {Name: "true", Description: ptr("1.0"),
			Metadata: `{"a":"null","b":"~","c":"0x1F","d":"2001-12-14","e":"<<","<<":"f","g":"- x","h":"#","i":"---","j":" lead","k":"trail ","l":"a: b","m":"*x","n":"&y","o":"!t","p":"","q":"yes"}`,
			Template: "x"},
		"a line that starts with a tab":       {Name: "n", Description: ptr("\t\n"), Metadata: `{"a":"x\n\ty\n"}`, Template: "x"},
		"template starting with front matter": {Name: "n", Template: "---\nname: other\n---\nbody"},
		"nested deep":                         {Name: "n", Metadata: prompts.Metadata(strings.Repeat(`{"a":`, 32) + "1" + strings.Repeat("}", 32)), Template: "x"},
	}
	for name, f := range files {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			b, err := promptfile.Format(f)
			is.NoErr(err) // format
			got, err := promptfile.Parse(b)
			is.NoErr(err)                                // parse what Format wrote
			is.True(sameFile(got, f))                    // the same file back
			is.Equal(got.Template, f.Template)           // the template byte for byte
			is.Equal(got.Metadata, f.Metadata)           // metadata's text kept, numbers included
			again, err := promptfile.Format(got)         //
			is.NoErr(err)                                // format again
			is.Equal(string(again), string(b))           // the same bytes
			is.True(bytes.HasPrefix(b, []byte("---\n"))) // the front matter first
		})
	}
}

// A file as people write it: comments, flow style, YAML's other forms of
// numbers, CRLF delimiters and a byte order mark.
func TestParseHandWritten(t *testing.T) {
	is := is.New(t)
	src := "\ufeff---  \r\n" +
		"# The greeting of the support bot.\r\n" +
		"name: Support greeting\r\n" +
		"description: >\r\n" +
		"  Folded\r\n" +
		"  text.\r\n" +
		"metadata: {model: gpt-5, temperature: 0.2, max: 0x10, eighth: .125, plus: +3, octal: 0o17, lead: 017, under: 1_000, on: yes, when: 2026-01-02, nothing: ~, list: [1, two]}\r\n" +
		"---\r\n" +
		"Hi {{name}}\r\n"
	f, err := promptfile.Parse([]byte(src))
	is.NoErr(err)
	is.Equal(f.Name, "Support greeting")
	is.Equal(*f.Description, "Folded text.\n")
	is.Equal(f.Format, prompts.FormatDotprompt) // no marker: a Dotprompt file
	is.Equal(string(f.Metadata), `{"metadata":{"model":"gpt-5","temperature":0.2,"max":16,"eighth":0.125,"plus":3,"octal":15,"lead":17,"under":1000,"on":"yes","when":"2026-01-02","nothing":null,"list":[1,"two"]}}`)
	is.Equal(f.Template, "Hi {{name}}\r\n") // the template as it is
	old, ok := f.Legacy()
	is.True(ok) // the form of the first releases
	is.Equal(old.Format, prompts.FormatPlain)
	is.Equal(string(old.Metadata), `{"model":"gpt-5","temperature":0.2,"max":16,"eighth":0.125,"plus":3,"octal":15,"lead":17,"under":1000,"on":"yes","when":"2026-01-02","nothing":null,"list":[1,"two"]}`)

	f, err = promptfile.Parse([]byte(strings.Replace(src, "---\r\nHi", "prompts.format: plain\r\n---\r\nHi", 1)))
	is.NoErr(err) // marked plain: metadata is the metadata field
	is.Equal(f, old)

	dp := prompts.FormatDotprompt
	f, err = promptfile.Parse([]byte("---\n---\nx"))
	is.NoErr(err) // an empty front matter: the metadata_ {}
	is.Equal(f, promptfile.File{Format: dp, Metadata: "{}", Template: "x"})
	f, err = promptfile.Parse([]byte("---\n# only a comment\n\n---\nx"))
	is.NoErr(err) // a front matter of comments
	is.Equal(f, promptfile.File{Format: dp, Metadata: "{}", Template: "x"})
	f, err = promptfile.Parse([]byte("---\nname: n\ndescription: d\n---\n x \n"))
	is.NoErr(err) // name and description only: still a front matter, so {}
	is.Equal(f, promptfile.File{Name: "n", Description: ptr("d"), Format: dp, Metadata: "{}", Template: " x \n"})
	old, ok = f.Legacy()
	is.True(ok) // the first releases' form: a plain version without metadata_
	is.Equal(old, promptfile.File{Name: "n", Description: ptr("d"), Format: prompts.FormatPlain, Template: " x \n"})
	for _, src := range []string{"Hello {{name}}\n", "# licence\nHello\n---\n---\nx", "\n\n  x  \n"} {
		f, err = promptfile.Parse([]byte(src))
		is.NoErr(err) // no front matter: the whole file is the template, without metadata_
		is.Equal(f, promptfile.File{Format: dp, Template: src})
	}
	f, err = promptfile.Parse([]byte("---\nname: n\ndescription: null\nmetadata: ~\n---\nx"))
	is.NoErr(err) // null description: none; a null metadata is the Dotprompt key's
	is.Equal(f, promptfile.File{Name: "n", Format: dp, Metadata: `{"metadata":null}`, Template: "x"})
	old, ok = f.Legacy()
	is.True(ok)
	is.Equal(old, promptfile.File{Name: "n", Format: prompts.FormatPlain, Template: "x"})
	f, err = promptfile.Parse([]byte("---\nname: n\nprompts.format: plain\ndescription: null\nmetadata: ~\n---\nx"))
	is.NoErr(err) // plain: null metadata is none
	is.Equal(f, promptfile.File{Name: "n", Format: prompts.FormatPlain, Template: "x"})
	f, err = promptfile.Parse([]byte("---\nname: 2026\n---\nx"))
	is.NoErr(err) // a name YAML reads as a number is its text
	is.Equal(f.Name, "2026")
}

// A broken file is an *Error naming its line; nothing else is returned.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		mentions  string // a word the message must hold
	}{
		{"empty file", "", 1, "empty"},
		{"no front matter, not a Dotprompt template", "Hello\n{{/if}}\n", 2, "Dotprompt"},
		{"no front matter, NUL", "a\n\x00", 2, "NUL"},
		{"not closed", "---\nname: a\ndescription: b\n", 1, "closed"},
		{"unknown field of a plain file", "---\nname: a\nmodel: gpt-5\nprompts.format: plain\n---\nx", 3, "model"},
		{"another key of the namespace", "---\nname: a\nprompts.version: 2\n---\nx", 3, "prompts."},
		{"an unknown format", "---\nprompts.format: html\n---\nx", 2, "plain or dotprompt"},
		{"bad YAML after a licence header", "# licence\n\n---\nname: [a\n---\nx", 4, "YAML"},
		{"not a Dotprompt template", "---\nname: a\n---\none\n{{/if}}\n", 5, "Dotprompt"},
		{"not a Dotprompt template after a header", "#\n---\nname: a\n---\n\n{{#each}}\n", 6, "Dotprompt"},
		{"field twice", "---\nname: a\nname: b\n---\nx", 3, "name"},
		{"bad YAML on line 3", "---\nname: a\ndescription: [b\n---\nx", 3, "YAML"},
		{"bad YAML on line 2", "---\n\tname: a\n---\nx", 2, "YAML"},
		{"bad indentation", "---\nmetadata:\n  a: 1\n b: 2\n---\nx", 4, "YAML"},
		{"bad escape", "---\nname: a\ndescription: \"\\q\"\n---\nx", 3, "YAML"},
		{"a control character", "---\nname: a\ndescription: \"a\x01\"\n---\nx", 3, "U+0001"},
		{"two documents", "---\nname: a\n...\nname: b\n---\nx", 4, "YAML"},
		{"not a mapping", "---\n- a\n- b\n---\nx", 2, "mapping"},
		{"name not a string", "---\nname: [a]\n---\nx", 2, "name"},
		{"name null", "---\nname: null\n---\nx", 2, "name"},
		{"name empty", "---\nname: \"\"\n---\nx", 2, "name"},
		{"name only spaces", "---\nname: \"  \"\n---\nx", 2, "name"},
		{"name too long", "---\nname: " + strings.Repeat("n", 257) + "\n---\nx", 2, "name"},
		{"description a mapping", "---\ndescription: {a: 1}\n---\nx", 2, "description"},
		{"metadata a list", "---\nname: a\nmetadata: [1]\nprompts.format: plain\n---\nx", 3, "metadata"},
		{"metadata an alias", "---\nmetadata:\n  a: &x 1\n  b: *x\n---\nx", 4, "alias"},
		{"metadata a merge key", "---\nmetadata:\n  a: &x {c: 1}\n  b:\n    <<: {c: 2}\n---\nx", 5, "merge"},
		{"metadata infinity", "---\nmetadata:\n  a: 1\n  b: .inf\n---\nx", 4, ".inf"},
		{"metadata a key twice", "---\nmetadata:\n  a: 1\n  a: 2\n---\nx", 4, "twice"},
		{"metadata a list key", "---\nmetadata:\n  [a]: 1\n---\nx", 3, "keys"},
		{"metadata a custom tag", "---\nmetadata:\n  a: !thing 1\n---\nx", 3, "!thing"},
		{"metadata too deep", "---\nmetadata: " + strings.Repeat("{a: ", 33) + "1" + strings.Repeat("}", 33) + "\n---\nx", 2, "32"},
		{"metadata with NUL", "---\nmetadata:\n  a: \"\\0\"\nprompts.format: plain\n---\nx", 3, "NUL"},
		{"a key with NUL", "---\nmodel: m\nconfig:\n  a: \"\\0\"\n---\nx", 2, "NUL"},
		{"empty template", "---\nname: a\n---\n", 4, "empty"},
		{"template without a line", "---\nname: a\n---", 3, "empty"},
		{"NUL in the template", "---\nname: a\n---\nline\nli\x00ne\n", 5, "NUL"},
		{"invalid UTF-8 in the template", "---\nname: a\n---\none\ntwo\n\xff\n", 6, "UTF-8"},
		{"invalid UTF-8 in the front matter", "---\nname: a\xff\n---\nx", 2, "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			f, err := promptfile.Parse([]byte(c.src))
			var pe *promptfile.Error
			is.True(errors.As(err, &pe)) // an *Error
			is.Equal(f, promptfile.File{})
			is.Equal(pe.Line, c.line)                        // the line
			is.True(strings.Contains(pe.Msg, c.mentions))    // names the problem
			is.True(strings.HasPrefix(err.Error(), "line ")) // and says where
		})
	}
}

// Metadata is the same when it is the same JSON value, however written.
func TestSameMetadata(t *testing.T) {
	is := is.New(t)
	same := [][2]prompts.Metadata{
		{"", ""},
		{"", "null"},
		{`{}`, ` { } `},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`},
		{`{"a":1}`, `{"a":1.0}`},
		{`{"a":1.5}`, `{"a":15e-1}`},
		{`{"a":100}`, `{"a":1E+2}`},
		{`{"a":0}`, `{"a":-0.0e5}`},
		{`{"a":1e400}`, `{"a":10e399}`},
		{`{"a":"é"}`, `{"a":"\u00e9"}`},
		{`{"a":[1,{"b":null}]}`, `{"a":[1.0,{"b":null}]}`},
	}
	for _, c := range same {
		is.True(promptfile.SameMetadata(c[0], c[1])) // the same value
	}
	differ := [][2]prompts.Metadata{
		{"", `{}`},
		{`{"a":1}`, `{"a":2}`},
		{`{"a":1}`, `{"a":"1"}`},
		{`{"a":1}`, `{"a":1,"b":1}`},
		{`{"a":12345678901234567890}`, `{"a":12345678901234567891}`},
		{`{"a":1e400}`, `{"a":1e401}`},
		{`{"a":[1,2]}`, `{"a":[2,1]}`},
		{`{"a":true}`, `{"a":"true"}`},
	}
	for _, c := range differ {
		is.True(!promptfile.SameMetadata(c[0], c[1])) // another value
	}
}

func TestKeysAndPaths(t *testing.T) {
	is := is.New(t)
	p, err := promptfile.Path("support/greeting")
	is.NoErr(err)
	is.Equal(p, "support/greeting.prompt")
	k, err := promptfile.Key(p)
	is.NoErr(err)
	is.Equal(k, "support/greeting")
	k, err = promptfile.Key("a.prompt.prompt")
	is.NoErr(err) // a key may end in .prompt
	is.Equal(k, "a.prompt")
	for _, key := range []string{"a/../../etc/passwd", "a//b", "a/", "a/./b", ""} {
		_, err := promptfile.Path(key)
		is.True(err != nil) // no file: it would name another one, or one outside
	}
	for _, path := range []string{"a.txt", "My Prompt.prompt", ".prompt", "_a.prompt", "a/-b.prompt/"} {
		_, err := promptfile.Key(path)
		is.True(err != nil) // not a prompt's file
	}
}

func TestReadDir(t *testing.T) {
	is := is.New(t)
	good := "---\nname: G\n---\nHello"
	fsys := fstest.MapFS{
		"support/greeting.prompt": {Data: []byte(good)},
		"support/faq.prompt":      {Data: []byte("---\n---\nQ")},
		"b.prompt":                {Data: []byte(good)},
		"README.md":               {Data: []byte("not a prompt")},
		".git/x.prompt":           {Data: []byte("broken")},
		".github/a.prompt":        {Data: []byte("broken")},
	}
	ps, err := promptfile.ReadDir(fsys)
	is.NoErr(err)
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key)
	}
	is.Equal(keys, []string{"b", "support/faq", "support/greeting"}) // lexical, hidden directories skipped
	is.Equal(ps[1].PromptName(), "support/faq")                      // no name: the key
	is.Equal(ps[2].PromptName(), "G")
	is.Equal(ps[2].Path, "support/greeting.prompt")

	fsys["c/bad.prompt"] = &fstest.MapFile{Data: []byte("---\nname: a\nprompts.format: plain\nmodel: x\n---\nx")}
	fsys["Bad Name.prompt"] = &fstest.MapFile{Data: []byte(good)}
	ps, err = promptfile.ReadDir(fsys)
	is.Equal(ps, nil) // all or nothing
	var found []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var pe *promptfile.Error
		is.True(errors.As(e, &pe)) // each an *Error
		found = append(found, e.Error())
	}
	is.Equal(len(found), 2)                                   // every broken file
	is.True(strings.HasPrefix(found[0], "Bad Name.prompt: ")) // named
	is.True(strings.HasPrefix(found[1], "c/bad.prompt:4: "))  // with the line
}

// FuzzRoundTrip: whatever a valid prompt holds, its file reads back as
// the same prompt.
func FuzzRoundTrip(f *testing.F) {
	f.Add("Greeting", "desc\n", true, `{"model":"gpt-5","t":0.20}`, "Hello {{name}}\n---\n\n")
	f.Add("", "", false, `{}`, "x")
	f.Add("true", "- a\r\n", true, `{"<<":1e400,"a":[null,{"b":"~"}]}`, "\r\n---\r\n")
	f.Add(" lead", "trail ", true, `{"x":"\u2028\u0085"}`, "🙂")
	f.Fuzz(func(t *testing.T, name, desc string, hasDesc bool, metadata, template string) {
		pf := promptfile.File{Name: name, Template: template}
		if hasDesc {
			pf.Description = &desc
		}
		// Metadata as a Store keeps it: an object, each name once.
		dec := json.NewDecoder(strings.NewReader(metadata))
		dec.UseNumber()
		var obj map[string]any
		if dec.Decode(&obj) == nil && obj != nil {
			b, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			pf.Metadata = prompts.Metadata(b)
		}
		in := prompts.NewPrompt{ProjectID: "p", Key: "k", Name: name, Description: pf.Description}
		if name == "" {
			in.Name = "k" // no name: the key
		}
		if in.Validate() != nil || (prompts.NewVersion{PromptID: "p", Content: template, Metadata: pf.Metadata}).Validate() != nil {
			return // not a prompt
		}
		b, err := promptfile.Format(pf)
		if err != nil {
			t.Fatalf("format %+v: %v", pf, err)
		}
		got, err := promptfile.Parse(b)
		if err != nil {
			t.Fatalf("parse %q: %v", b, err)
		}
		if !sameFile(got, pf) {
			t.Fatalf("round trip of %q:\ngot  %+v\nwant %+v", b, got, pf)
		}
	})
}

// FuzzParse: Parse never panics, and a file it reads, written again,
// reads the same.
func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\nmetadata: {a: [1, {b: c}]}\n---\nHello"))
	f.Add([]byte("---\r\n---\r\nx\r\n"))
	f.Add([]byte("---\nmetadata:\n  a: &x 1\n  b: *x\n---\nx"))
	f.Add([]byte("---\nname: |\n  a\n  ---\n---\nx"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := promptfile.Parse(data)
		if err != nil {
			var pe *promptfile.Error
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > bytes.Count(data, []byte("\n"))+1 {
				t.Fatalf("parse %q: %v is not an *Error at a line of the file", data, err)
			}
			return
		}
		b, err := promptfile.Format(pf)
		if err != nil {
			t.Fatalf("format %+v: %v", pf, err)
		}
		again, err := promptfile.Parse(b)
		if err != nil {
			t.Fatalf("parse %q (written from %q): %v", b, data, err)
		}
		if !sameFile(again, pf) {
			t.Fatalf("%q read %+v, written and read again %+v", data, pf, again)
		}
	})
}

// dotpromptFiles are Dotprompt's own files (testdata/dotprompt) and the
// templates of its specification that have a front matter and a body,
// by a name each.
func dotpromptFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := fs.WalkDir(os.DirFS("testdata/dotprompt"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".prompt") {
			return err
		}
		files[p], err = os.ReadFile("testdata/dotprompt/" + p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	specs, err := filepath.Glob("../internal/dotprompt/testdata/spec/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../internal/dotprompt/testdata/spec/helpers/*.yaml")
	for _, name := range append(specs, more...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var suites []struct {
			Name     string `yaml:"name"`
			Template string `yaml:"template"`
		}
		if err := yaml.Unmarshal(b, &suites); err != nil {
			t.Fatal(err)
		}
		for _, s := range suites {
			if fm, body := dotprompt.SplitSource(s.Template); fm != "" && body != "" {
				files["spec/"+filepath.Base(name)+"/"+s.Name] = []byte(s.Template)
			}
		}
	}
	if len(files) < 11 {
		t.Fatalf("only %d files of Dotprompt's", len(files))
	}
	return files
}

// Dotprompt's own files read as Dotprompt reads them, and Format writes
// files that read back the same: the same front matter values and the
// same template, and the same bytes when the front matter had the form
// Format writes already.
func TestDotpromptFiles(t *testing.T) {
	canonical := 0
	for name, b := range dotpromptFiles(t) {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			f, err := promptfile.Parse(b)
			is.NoErr(err) // parses
			is.Equal(f.Format, prompts.FormatDotprompt)
			fm, body := dotprompt.SplitSource(string(b))
			is.Equal(dotprompt.Body(f.Template), body) // the template Dotprompt renders
			var want map[string]any
			is.NoErr(yaml.Unmarshal([]byte(fm), &want))
			got := map[string]any{}
			if !f.Metadata.IsNull() {
				is.NoErr(json.Unmarshal([]byte(f.Metadata), &got))
			}
			if f.Name != "" {
				got["name"] = f.Name
			}
			if f.Description != nil {
				got["description"] = *f.Description
			}
			is.Equal(sameJSON(mustJSON(t, got), mustJSON(t, want)), true) // the front matter's values
			out, err := promptfile.Format(f)
			is.NoErr(err)
			back, err := promptfile.Parse(out)
			is.NoErr(err)
			is.True(sameFile(back, f))                        // the same values back
			is.Equal(back.Template, f.Template)               // the template byte for byte
			is.True(bytes.HasSuffix(out, []byte(f.Template))) // …written as it is
			again, err := promptfile.Format(back)
			is.NoErr(err)
			is.Equal(string(again), string(out)) // written once, written the same
			if bytes.Equal(out, b) {
				canonical++
			}
		})
	}
	if canonical < 3 {
		t.Errorf("only %d files written back byte for byte", canonical)
	}
}

// mustJSON is v's JSON text (YAML's numbers and JSON's compared as JSON).
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A dotprompt version's file has a front matter exactly when its version
// has a metadata_ (or the prompt a description, or a name other than its
// key), so that the file reads back as the same metadata_: null for a
// file without front matter, {} at least for one with.
func TestForVersionFrontMatter(t *testing.T) {
	dp := prompts.FormatDotprompt
	cases := []struct {
		name     string
		p        prompts.Prompt
		v        prompts.PromptVersion
		file     string
		metadata prompts.Metadata // what the file reads back as
	}{
		{"no metadata_", prompts.Prompt{Key: "k", Name: "k"}, prompts.PromptVersion{TemplateFormat: dp, Content: " x\n"}, " x\n", ""},
		{"no metadata_, a template like a front matter", prompts.Prompt{Key: "k", Name: "k"}, prompts.PromptVersion{TemplateFormat: dp, Content: "---\na: b\n---\nx"},
			"---\n---\n---\na: b\n---\nx", "{}"},
		{"the metadata_ {}", prompts.Prompt{Key: "k", Name: "k"}, prompts.PromptVersion{TemplateFormat: dp, Metadata: "{}", Content: "x"}, "---\nname: k\n---\nx", "{}"},
		{"a name", prompts.Prompt{Key: "k", Name: "N"}, prompts.PromptVersion{TemplateFormat: dp, Content: "x"}, "---\nname: N\n---\nx", "{}"},
		{"a description", prompts.Prompt{Key: "k", Name: "k", Description: ptr("d")}, prompts.PromptVersion{TemplateFormat: dp, Content: "x"}, "---\ndescription: d\n---\nx", "{}"},
		{"a model", prompts.Prompt{Key: "k", Name: "k"}, prompts.PromptVersion{TemplateFormat: dp, Metadata: `{"model":"m"}`, Content: "x"}, "---\nmodel: m\n---\nx", `{"model":"m"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			b, err := promptfile.Format(promptfile.ForVersion(c.p, c.v))
			is.NoErr(err)
			is.Equal(string(b), c.file)
			f, err := promptfile.Parse(b)
			is.NoErr(err)
			is.Equal(f.Template, c.v.Content) // the template byte for byte
			is.Equal(f.Metadata, c.metadata)
		})
	}
}
