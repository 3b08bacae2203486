package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
	"go.yaml.in/yaml/v3"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/dotprompt"
	"github.com/promptkit/prompts/promptfile"
)

// refusedDotpromptFiles are the files of Dotprompt's repository whose
// schemas do not compile, by path, with the key the refusal names. They
// are refused, as Dotprompt's Go implementation refuses them too (its
// Picoschema parser: "string[]" is no Picoschema type, and a JSON Schema
// whose property is the string "string" does not decode).
var refusedDotpromptFiles = map[string]string{
	"examples/features.prompt":                               "metadata_.input.schema",
	"packages/codemirror/samples/03-multimodal-media.prompt": "metadata_.input.schema",
	"packages/codemirror/samples/09-complex-schema.prompt":   "metadata_.output.schema",
}

// dotpromptFiles are Dotprompt's own files (promptfile/testdata/dotprompt)
// and the templates of its specification that have a front matter and a
// body (as spec/FILE/SUITE.prompt), by path.
func dotpromptFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	root := "../../promptfile/testdata/dotprompt"
	err := fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".prompt") {
			return err
		}
		if _, refused := refusedDotpromptFiles[p]; refused {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(root, p))
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	specs, _ := filepath.Glob("../../internal/dotprompt/testdata/spec/*.yaml")
	helpers, _ := filepath.Glob("../../internal/dotprompt/testdata/spec/helpers/*.yaml")
	for _, name := range append(specs, helpers...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var suites []struct{ Name, Template string }
		if err := yaml.Unmarshal(b, &suites); err != nil {
			t.Fatal(err)
		}
		for _, s := range suites {
			if fm, body := dotprompt.SplitSource(s.Template); fm != "" && body != "" {
				files["spec/"+strings.TrimSuffix(filepath.Base(name), ".yaml")+"/"+s.Name+".prompt"] = s.Template
			}
		}
	}
	if len(files) < 8 {
		t.Fatalf("only %d of Dotprompt's files", len(files))
	}
	return files
}

// Dotprompt's own files apply unchanged to a server, as dotprompt
// versions, and export to files that read as the same front matter values
// and the same template: byte for byte when the front matter had the form
// export writes already. Applying them again, or the exported files,
// changes nothing.
func TestDotpromptFilesRoundTrip(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	in := t.TempDir()
	files := dotpromptFiles(t)
	writeFiles(t, in, files)
	r := cli(t, s, nil, "apply", "-dir", in)
	is.Equal(r.stderr, "")
	is.Equal(r.code, 0) // applied unchanged

	out := t.TempDir()
	r = cli(t, s, nil, "export", "-dir", out)
	is.Equal(r.code, 0)
	exported := readFiles(t, out)
	is.Equal(len(exported), len(files))
	same := 0
	for name, src := range files {
		want, err := promptfile.Parse([]byte(src))
		is.NoErr(err)
		got, err := promptfile.Parse([]byte(exported[name]))
		is.NoErr(err)                                                 // the exported file reads
		is.Equal(got.Format, prompts.FormatDotprompt)                 // a dotprompt version
		is.Equal(got.Name, want.Name)                                 // the same name…
		is.Equal(got.Description, want.Description)                   // description…
		is.True(promptfile.SameMetadata(got.Metadata, want.Metadata)) // front matter values…
		is.Equal(got.Template, want.Template)                         // and template, byte for byte
		canonical, err := promptfile.Format(want)
		is.NoErr(err)
		if string(canonical) == src {
			is.Equal(exported[name], src) // in export's form already: the same bytes
			same++
		}
	}
	is.True(same >= 3) // some files are in that form

	before := s.state(t)
	r = cli(t, s, nil, "apply", "-dir", in)
	is.Equal(r.code, 0)
	is.Equal(s.state(t), before) // the files again: nothing changes
	r = cli(t, s, nil, "apply", "-dir", out)
	is.Equal(r.code, 0)
	is.Equal(s.state(t), before) // the exported files: nothing changes
}

// The files of Dotprompt's repository whose schemas do not compile are
// refused, each with an error naming the key, and change nothing.
func TestDotpromptFilesRefused(t *testing.T) {
	for name, key := range refusedDotpromptFiles {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			s := newServer(t, nil)
			src, err := os.ReadFile(filepath.Join("../../promptfile/testdata/dotprompt", name))
			is.NoErr(err)
			in := t.TempDir()
			writeFiles(t, in, map[string]string{filepath.Base(name): string(src)})
			before := s.state(t)
			r := cli(t, s, nil, "apply", "-dir", in)
			is.True(r.code != 0)                     // refused
			is.True(strings.Contains(r.stderr, key)) // naming the schema
			is.Equal(s.state(t), before)             // nothing changed
		})
	}
}

// A Dotprompt file with a front matter makes a version with a metadata_
// ({} when it holds only name and description), which renders trimmed as
// Genkit renders the file; a file without front matter makes one without,
// which renders every byte. Export writes each back so that applying it
// makes no version, whatever made the version.
func TestDotpromptFrontMatterMetadata(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	in := t.TempDir()
	writeFiles(t, in, map[string]string{
		"named.prompt": "---\nname: Named\ndescription: d\n---\n\n  Hi {{name}}  \n\n",
		"empty.prompt": "---\n---\n  Hi  \n",
		"bare.prompt":  "  Hi {{name}}  \n",
	})
	r := cli(t, s, nil, "apply", "-dir", in, "-promote", "production")
	is.Equal(r.stderr, "")
	is.Equal(r.code, 0)
	st := s.state(t)
	is.Equal(st["named"].Latest.Metadata, prompts.Metadata("{}")) // a front matter: {}
	is.Equal(st["empty"].Latest.Metadata, prompts.Metadata("{}"))
	is.Equal(st["bare"].Latest.Metadata, prompts.Metadata("")) // none: null
	is.Equal(st["bare"].Latest.TemplateFormat.Or(""), prompts.FormatDotprompt)
	r = cli(t, s, nil, "render", "named", "-var", "name=Ann")
	is.Equal(r.stdout, "[user]\nHi Ann\n") // trimmed, as Genkit renders the file
	r = cli(t, s, nil, "render", "bare", "-var", "name=Ann")
	is.Equal(r.stdout, "[user]\n  Hi Ann  \n") // every byte

	// Versions made over the API, with and without metadata_.
	for _, c := range []struct {
		key  string
		desc *string
		md   prompts.Metadata
	}{{"api-null", nil, ""}, {"api-null-described", ptr("d"), ""}, {"api-empty", nil, "{}"}} {
		p := s.seed(t, c.key, c.key, c.desc, "", nil, nil)
		_, err := s.store.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, TemplateFormat: prompts.FormatDotprompt, Content: "x", Metadata: c.md})
		is.NoErr(err)
	}
	before := s.state(t)
	r = cli(t, s, nil, "apply", "-dir", in, "-dry-run")
	is.Equal(r.code, 0) // the files again: nothing to do
	out := t.TempDir()
	r = cli(t, s, nil, "export", "-dir", out)
	is.Equal(r.code, 0)
	exported := readFiles(t, out)
	is.Equal(exported["bare.prompt"], "  Hi {{name}}  \n") // no front matter
	is.Equal(exported["api-null.prompt"], "x")             // none
	is.Equal(exported["api-null-described.prompt"], "---\ndescription: d\n---\nx")
	is.Equal(exported["api-empty.prompt"], "---\nname: api-empty\n---\nx") // a front matter for {}
	r = cli(t, s, nil, "apply", "-dir", out)
	is.Equal(r.code, 0)
	is.Equal(s.state(t), before) // its own export: no new version
}
