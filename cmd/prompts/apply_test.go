package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// seedVaried fills a server with prompts whose files are hard to get
// right: templates with lines of dashes, without a trailing newline or
// with several, CRLF, Unicode; metadata with numbers past float64,
// nested values, an empty object; descriptions of several lines, empty,
// none; keys in directories.
func seedVaried(t *testing.T, s *server) {
	s.seed(t, "support/greeting", "Support greeting", ptr("The first answer.\nTwo lines.\n"),
		`{"model":"gpt-5","temperature":0.20,"big":1e400,"long":12345678901234567890123,"nested":{"list":[1,"two",null,true,{}]}}`,
		[]string{"Hi {{name}}", "Hello {{name}}, thanks for writing.\n"}, map[prompts.Environment]int{prompts.Production: 1, prompts.Staging: 2})
	s.seed(t, "support/faq/refunds", "Refunds", nil, "", []string{"---\nnot front matter\n---\n---"}, nil)
	s.seed(t, "crlf", "CRLF", ptr(""), `{}`, []string{"line one\r\nline two\r\n---\r\n"}, nil)
	s.seed(t, "unicode", "Grüße 🙂 日本", ptr("\u2028 tab\tand a \"quote\""), `{"ключ":"значение","a":"<<"}`, []string{"Grüß {{ name }} 🙂\u2028\ufeff"}, nil)
	s.seed(t, "newlines", "newlines", nil, "", []string{"x\n\n\n"}, nil)
	s.seed(t, "looks.like/yaml", "true", ptr("1.0"), `{"null":null,"yes":"no"}`, []string{"name: not front matter\n"}, nil)
}

// Export, then apply to an empty server, reproduces every prompt byte for
// byte; a second apply changes nothing.
func TestExportThenApplyReproducesEveryPrompt(t *testing.T) {
	is := is.New(t)
	a := newServer(t, nil)
	seedVaried(t, a)
	a.seed(t, "draft", "Draft", nil, "", nil, nil) // no version: no file

	dirA := t.TempDir()
	r := cli(t, a, nil, "export", "-dir", dirA)
	is.Equal(r.code, 0) // export
	is.True(strings.Contains(r.stdout, "draft"))
	filesA := readFiles(t, dirA)
	is.Equal(len(filesA), 6) // a file for every prompt with a version

	b := newServer(t, nil)
	r = cli(t, b, nil, "apply", "-dir", dirA)
	is.Equal(r.code, 0) // apply to the empty server
	stateA, stateB := a.state(t), b.state(t)
	delete(stateA, "draft")
	is.Equal(keys(stateB), keys(stateA)) // every prompt
	for k, pa := range stateA {
		pb := stateB[k]
		is.Equal(pb.Name, pa.Name)                         // the name
		is.Equal(pb.Description, pa.Description)           // the description
		is.Equal(pb.Latest.Content, pa.Latest.Content)     // the content, byte for byte
		is.Equal(pb.Latest.Metadata, pa.Latest.Metadata)   // the metadata, as text
		is.Equal(pb.Latest.Variables, pa.Latest.Variables) // hence the variables
		is.Equal(pb.Versions, 1)                           // one version each
		is.Equal(len(pb.Active), 0)                        // active nowhere: no -promote
	}

	dirB := t.TempDir()
	r = cli(t, b, nil, "export", "-dir", dirB)
	is.Equal(r.code, 0)
	is.Equal(readFiles(t, dirB), filesA) // the files again, byte for byte

	r = cli(t, b, nil, "apply", "-dir", dirA)
	is.Equal(r.code, 0)                                 // a second apply
	is.Equal(b.state(t), stateB)                        // changes nothing: revisions included
	is.Equal(strings.Count(r.stdout, "unchanged  "), 6) // and says so for each
	r = cli(t, b, nil, "apply", "-dir", dirA, "-dry-run")
	is.Equal(r.code, 0) // nothing would change

	r = cli(t, a, nil, "export", "-dir", dirA)
	is.Equal(r.code, 0)                  // export again over the files
	is.Equal(readFiles(t, dirA), filesA) // leaves them as they were
}

// -dry-run changes nothing and exits 0 when nothing would change, 2 when
// something would, 1 for an error. Metadata differs when it is another
// JSON value, not when it is written otherwise.
func TestDryRunExitCodes(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"greeting.prompt":    "---\nname: Greeting\nmetadata:\n  model: gpt-5\n  temperature: 0.2\n---\nHello {{name}}\n",
		"support/faq.prompt": "---\n---\nQ&A",
	})
	dryRun := func(extra ...string) int {
		t.Helper()
		before := s.state(t)
		r := cli(t, s, nil, append([]string{"apply", "-dir", dir, "-dry-run"}, extra...)...)
		is.Equal(s.state(t), before) // a dry run changes nothing
		return r.code
	}
	is.Equal(dryRun(), 2) // an empty server: two prompts to create
	is.Equal(len(s.state(t)), 0)
	is.Equal(cli(t, s, nil, "apply", "-dir", dir).code, 0)
	is.Equal(dryRun(), 0) // applied: nothing would change

	edit := func(name, content string) { writeFiles(t, dir, map[string]string{name: content}) }
	edit("greeting.prompt", "---\nname: Greeting\nmetadata: {temperature: 0.20, \"model\": gpt-5}\n---\nHello {{name}}\n")
	is.Equal(dryRun(), 0) // the same metadata, written otherwise: no change
	edit("greeting.prompt", "---\nname: Greeting\nmetadata: {temperature: 0.3, model: gpt-5}\n---\nHello {{name}}\n")
	is.Equal(dryRun(), 2) // another value
	edit("greeting.prompt", "---\nname: Greeting\nmetadata: {temperature: 0.2, model: gpt-5}\n---\nHello {{name}}")
	is.Equal(dryRun(), 2) // the template lost its newline
	edit("greeting.prompt", "---\nname: Greeting!\nmetadata: {temperature: 0.2, model: gpt-5}\n---\nHello {{name}}\n")
	is.Equal(dryRun(), 2) // the name
	edit("greeting.prompt", "---\nname: Greeting\nmetadata: {temperature: 0.2, model: gpt-5}\n---\nHello {{name}}\n")
	is.Equal(dryRun(), 0)                      // back as applied
	is.Equal(dryRun("-promote", "staging"), 2) // not active in staging: it would be promoted

	r := cli(t, s, nil, "apply", "-dir", dir, "-dry-run", "-json")
	is.Equal(r.code, 0)
	var p plan
	is.NoErr(json.Unmarshal([]byte(r.stdout), &p)) // -json is the plan
	is.Equal(len(p.Prompts), 2)
	is.Equal(p.Prompts[0].Action, "unchanged")
	is.True(p.DryRun)

	edit("bad.prompt", "---\nname: Bad\nprompts.format: plain\nmodel: x\n---\nx")
	is.Equal(dryRun(), 1)                                                       // a broken file: an error, not a change
	is.Equal(cli(t, s, nil, "apply", "-dir", dir, "-dry-run", "-nope").code, 1) // a bad command line too: never 2
}

// -promote makes every new version active in the environment with the
// reason, in one step per prompt, and the latest version of unchanged
// files too; the promotion guard holds unless -allow-variable-change.
func TestApplyPromote(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"greeting.prompt": "---\nname: Greeting\n---\nHello {{name}}\n",
		"farewell.prompt": "---\nname: Farewell\n---\nBye {{name}}\n",
	})
	r := cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging", "-reason", "merge abc", "-message", "from CI")
	is.Equal(r.code, 0)
	st := s.state(t)
	for _, k := range []string{"greeting", "farewell"} {
		is.Equal(st[k].Active, map[prompts.Environment]int{prompts.Staging: 1}) // active in staging
		is.Equal(*st[k].Latest.ChangeSummary, "from CI")                        // -message
		ds := s.deployments(t, k)
		is.Equal(len(ds), 1)                 // one record: created active, in one step
		is.Equal(*ds[0].Reason, "merge abc") // with the reason
		is.Equal(*ds[0].Actor, "ci")         // by the key
	}

	r = cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging", "-reason", "merge def")
	is.Equal(r.code, 0)
	is.Equal(s.state(t), st) // again: nothing

	// Someone activated an older version in staging: the merge puts the
	// latest back.
	writeFiles(t, dir, map[string]string{"greeting.prompt": "---\nname: Greeting\n---\nHello {{name}}, again\n"})
	is.Equal(cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging").code, 0)
	g, err := s.store.GetActiveByKey(t.Context(), s.project.ID, "greeting", prompts.Staging)
	is.NoErr(err)
	_, err = s.store.Activate(t.Context(), prompts.Activation{PromptID: g.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(1)})
	is.NoErr(err)
	r = cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging", "-reason", "back")
	is.Equal(r.code, 0)
	is.True(strings.Contains(r.stdout, "promoted"))
	st = s.state(t)
	is.Equal(st["greeting"].Active[prompts.Staging], 2) // the latest again
	is.Equal(*s.deployments(t, "greeting")[0].Reason, "back")

	is.Equal(cli(t, s, nil, "apply", "-dir", dir, "-promote", "production").code, 0)
	st = s.state(t)
	is.Equal(st["greeting"].Active[prompts.Production], 2) // unchanged files promoted too
	is.Equal(st["farewell"].Active[prompts.Production], 1)

	// A template with other variables: the guard refuses, before any
	// change, also of the other files.
	writeFiles(t, dir, map[string]string{
		"greeting.prompt": "---\nname: Greeting\n---\nHello {{name}} from {{team}}\n",
		"farewell.prompt": "---\nname: Farewell\n---\nBye {{name}}!\n",
	})
	before := s.state(t)
	r = cli(t, s, nil, "apply", "-dir", dir, "-promote", "production")
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, filepath.Join(dir, "greeting.prompt")))                   // names the file
	is.True(strings.Contains(r.stderr, "-allow-variable-change"))                                // and the way out
	is.True(strings.Contains(r.stderr, "nothing was applied: 1 prompt would be refused"))        // not "1 prompt(s)"
	is.Equal(s.state(t), before)                                                                 // nothing changed
	is.Equal(cli(t, s, nil, "apply", "-dir", dir, "-promote", "production", "-dry-run").code, 1) // a dry run says so

	r = cli(t, s, nil, "apply", "-dir", dir, "-promote", "production", "-allow-variable-change")
	is.Equal(r.code, 0)
	st = s.state(t)
	is.Equal(st["greeting"].Active[prompts.Production], 3)
	is.Equal(st["farewell"].Active[prompts.Production], 2)
}

// A broken file stops apply before any change, naming the file and the
// line; every broken file is named.
func TestBrokenFileAppliesNothing(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"good.prompt":         "---\nname: Good\n---\nfine",
		"sub/bad.prompt":      "---\nname: Bad\nmodel: gpt-5\nprompts.format: plain\n---\nx",
		"sub/unclosed.prompt": "---\nname: Open\n",
	})
	r := cli(t, s, nil, "apply", "-dir", dir)
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, filepath.Join(dir, "sub", "bad.prompt")+":3:")) // the file and the line
	is.True(strings.Contains(r.stderr, filepath.Join(dir, "sub", "unclosed.prompt")+":1:"))
	is.Equal(len(s.state(t)), 0) // not even the good file was applied
	is.True(strings.Contains(r.stderr, "nothing was applied: 2 files cannot be read"))
	is.Equal(cli(t, s, nil, "apply", "-dir", filepath.Join(dir, "missing")).code, 1)

	is.NoErr(os.Remove(filepath.Join(dir, "sub", "unclosed.prompt")))
	r = cli(t, s, nil, "apply", "-dir", dir)
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, "nothing was applied: 1 file cannot be read")) // not "1 file(s)"
}

// The server's prompts that have no file are listed and left as they are.
func TestPromptsWithoutAFileAreLeftAlone(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	s.seed(t, "legacy/old", "Old", nil, "", []string{"old"}, map[prompts.Environment]int{prompts.Production: 1})
	before := s.state(t)["legacy/old"]
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"new.prompt": "---\n---\nnew"})
	r := cli(t, s, nil, "apply", "-dir", dir, "-promote", "production", "-json")
	is.Equal(r.code, 0)
	var p plan
	is.NoErr(json.Unmarshal([]byte(r.stdout), &p))
	is.Equal(len(p.ServerOnly), 1)
	is.Equal(p.ServerOnly[0].Key, "legacy/old") // listed
	is.Equal(s.state(t)["legacy/old"], before)  // untouched
	r = cli(t, s, nil, "apply", "-dir", dir)
	is.True(strings.Contains(r.stdout, "legacy/old"))                              // in the plan for people too
	is.True(strings.Contains(r.stdout, "; 1 on the server only, left as it is\n")) // counted, in words that agree

	s.seed(t, "legacy/older", "Older", nil, "", []string{"older"}, nil)
	r = cli(t, s, nil, "apply", "-dir", dir)
	is.True(strings.Contains(r.stdout, "; 2 on the server only, left as they are\n"))
}

// lossy answers the nth request that creates a version after the server
// did it, as if the answer were lost: with a 500, or by cutting the
// connection.
type lossy struct {
	n, seen atomic.Int32
	cut     bool
}

func (l *lossy) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/versions") || l.seen.Add(1) != l.n.Load() {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(httptest.NewRecorder(), r) // done, and the answer lost
		if l.cut {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
				return
			}
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"type":"about:blank","title":"Internal Server Error","status":500,"detail":"lost","code":"internal"}`))
	})
}

// An apply whose write was done but whose answer was lost never makes a
// second version: retried within the run (a cut connection) or by running
// apply again (a failure).
func TestRetriedApplyMakesNoDuplicate(t *testing.T) {
	for _, c := range []struct {
		name     string
		cut      bool
		firstRun int
	}{
		{"a failure, then apply again", false, 1},
		{"a cut connection, retried by the run", true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			l := &lossy{cut: c.cut}
			s := newServer(t, l.wrap)
			s.seed(t, "a", "A", nil, "", []string{"a1"}, map[prompts.Environment]int{prompts.Staging: 1})
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"a.prompt": "---\nname: A\n---\na2",
				"b.prompt": "---\nname: B\n---\nb1",
				"c.prompt": "---\nname: C\n---\nc1",
			})
			l.n.Store(2) // the second version's answer is lost
			r := cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging", "-reason", "r")
			is.Equal(r.code, c.firstRun)
			cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging", "-reason", "r")
			r = cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging", "-reason", "r", "-dry-run")
			is.Equal(r.code, 0) // it all holds now
			st := s.state(t)
			is.Equal(st["a"].Versions, 2) // one new version each, never two
			is.Equal(st["b"].Versions, 1)
			is.Equal(st["c"].Versions, 1)
			for _, k := range []string{"b", "c"} {
				is.Equal(len(s.deployments(t, k)), 1) // and one record
			}
		})
	}
}

// Two applies of the same files racing (two CI jobs of one merge) make
// one version: their writes carry the same idempotency key.
func TestConcurrentAppliesMakeOneVersion(t *testing.T) {
	is := is.New(t)
	var (
		mu      sync.Mutex
		waiting int
		release = make(chan struct{})
		met     atomic.Bool
	)
	// Writes of versions wait until both runs have sent theirs, so that
	// both planned before either wrote.
	barrier := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/versions") {
				mu.Lock()
				waiting++
				if waiting == 2 {
					met.Store(true)
					close(release)
				}
				mu.Unlock()
				select {
				case <-release:
				case <-time.After(30 * time.Second): // a safety net, not a timing
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	s := newServer(t, barrier)
	s.seed(t, "a", "A", nil, "", []string{"one"}, nil)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.prompt": "---\nname: A\n---\ntwo"})
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Go(func() { codes[i] = cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging").code })
	}
	wg.Wait()
	is.True(met.Load()) // both wrote after both planned
	is.Equal(codes, []int{0, 0})
	st := s.state(t)
	is.Equal(st["a"].Versions, 2) // one new version
	is.Equal(len(s.deployments(t, "a")), 1)
}

// apply reads only files ending in .prompt, and skips hidden directories.
func TestApplyIgnoresOtherFiles(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.prompt":       "---\n---\na",
		"README.md":      "# prompts",
		".git/x.prompt":  "not a prompt file",
		"a.prompt.tmp-x": "junk",
	})
	is.Equal(cli(t, s, nil, "apply", "-dir", dir).code, 0)
	is.Equal(keys(s.state(t)), []string{"a"})
}

// A file that changes only its name or description, promoted where its
// latest version is not active yet: both happen, in one run. (The update
// moves the prompt's revision; the promotion compares the revision the
// plan read, so it must come first.)
func TestApplyPromoteWithARename(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	s.seed(t, "one", "One", nil, "", []string{"Hello"}, nil)
	s.seed(t, "two", "Two", nil, "", []string{"Bye"}, nil)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"one.prompt": "---\nname: One renamed\n---\nHello",
		"two.prompt": "---\nname: Two\ndescription: Now described\n---\nBye",
	})
	r := cli(t, s, nil, "apply", "-dir", dir, "-promote", "production", "-reason", "release")
	is.Equal(r.code, 0) // no false "changed while this ran"
	st := s.state(t)
	is.Equal(st["one"].Name, "One renamed")                                        // renamed
	is.Equal(st["one"].Active, map[prompts.Environment]int{prompts.Production: 1}) // and promoted
	is.Equal(*st["two"].Description, "Now described")
	is.Equal(st["two"].Active, map[prompts.Environment]int{prompts.Production: 1})
	is.True(strings.Contains(r.stdout, "2 updated"))
}

// The summary of a run counts what was done: a failed prompt is counted
// as failed, not as updated.
func TestApplySummaryCountsFailures(t *testing.T) {
	is := is.New(t)
	l := &lossy{}
	s := newServer(t, l.wrap)
	s.seed(t, "a", "A", nil, "", []string{"a1"}, nil)
	s.seed(t, "b", "B", nil, "", []string{"b1"}, nil)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.prompt": "---\nname: A\n---\na2",
		"b.prompt": "---\nname: B\n---\nb2",
	})
	l.n.Store(1) // the first new version's answer is lost
	r := cli(t, s, nil, "apply", "-dir", dir)
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stdout, "1 updated, 1 failed"))              // not "2 updated"
	is.True(strings.Contains(r.stderr, "1 prompt failed; run apply again")) // not "1 prompt(s)"
}

// A file makes a dotprompt version, and one marked prompts.format: plain
// a plain version, whatever the latest's format; the same text in another
// format is another template. A file of the first releases (no marker,
// name, description and metadata only) keeps making plain versions of a
// prompt whose latest version is plain.
func TestApplyFormats(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t, nil)
	dir := t.TempDir()
	version := func(key string, n int) prompts.PromptVersion {
		t.Helper()
		a, err := s.store.GetActiveByKey(ctx, s.project.ID, key, prompts.Production)
		is.NoErr(err)
		v, err := s.store.GetVersion(ctx, a.ID, n)
		is.NoErr(err)
		return v
	}
	apply := func(files map[string]string) {
		t.Helper()
		writeFiles(t, dir, files)
		r := cli(t, s, nil, "apply", "-dir", dir)
		is.Equal(r.stderr, "")
		is.Equal(r.code, 0)
	}

	// A new prompt: a Dotprompt file.
	apply(map[string]string{"chat.prompt": "---\nname: Chat\nmodel: m\nconfig: {temperature: 0.20}\nmetadata: {team: a}\n---\n{{role \"system\"}}Hi {{name}}\n"})
	v := version("chat", 1)
	is.Equal(v.TemplateFormat, prompts.FormatDotprompt)
	is.Equal(string(v.Metadata), `{"model":"m","config":{"temperature":0.20},"metadata":{"team":"a"}}`)
	is.Equal(v.Content, "{{role \"system\"}}Hi {{name}}\n")

	// The same text marked plain: another template.
	apply(map[string]string{"chat.prompt": "---\nname: Chat\nprompts.format: plain\n---\n{{role \"system\"}}Hi {{name}}\n"})
	v = version("chat", 2)
	is.Equal(v.TemplateFormat, prompts.FormatPlain)
	is.Equal(v.Metadata, prompts.Metadata(""))

	// A prompt of the first releases, and its file as they exported it.
	old := "---\nname: Greeting\nmetadata:\n  model: gpt-5\n---\nHello {{name}}\n"
	s.seed(t, "greeting", "Greeting", nil, `{"model":"gpt-5"}`, []string{"Hello {{name}}\n"}, nil)
	r := cli(t, s, nil, "apply", "-dir", dir, "-dry-run")
	is.Equal(r.code, 0) // nothing to change: the old file reads as it did
	writeFiles(t, dir, map[string]string{"greeting.prompt": old})
	r = cli(t, s, nil, "apply", "-dir", dir, "-dry-run")
	is.Equal(r.code, 0)
	is.True(strings.Contains(r.stdout, "unchanged  greeting"))
	apply(map[string]string{"greeting.prompt": strings.Replace(old, "Hello", "Hi", 1)})
	v = version("greeting", 2)
	is.Equal(v.TemplateFormat, prompts.FormatPlain) // still plain
	is.Equal(string(v.Metadata), `{"model":"gpt-5"}`)
	// A Dotprompt key makes it a Dotprompt file.
	apply(map[string]string{"greeting.prompt": "---\nname: Greeting\nmodel: gpt-5\n---\nHi {{name}}\n"})
	v = version("greeting", 3)
	is.Equal(v.TemplateFormat, prompts.FormatDotprompt)
	is.Equal(string(v.Metadata), `{"model":"gpt-5"}`)
	// Its latest is dotprompt now: the old form reads as Dotprompt's.
	apply(map[string]string{"greeting.prompt": old})
	v = version("greeting", 4)
	is.Equal(v.TemplateFormat, prompts.FormatDotprompt)
	is.Equal(string(v.Metadata), `{"metadata":{"model":"gpt-5"}}`)
}

// apply -promote activates a prompt's partials that are among the files
// before the prompt (the server refuses the other order), in one run;
// -allow-missing-partials lets a version whose partial is active nowhere
// be activated; a cycle of partials among the files is refused, named,
// before any change.
func TestApplyPromoteOrdersPartials(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	in := t.TempDir()
	writeFiles(t, in, map[string]string{"aa.prompt": "A {{> zz/p}}", "zz/p.prompt": "P {{> zz/q}}", "zz/q.prompt": "Q"})
	r := cli(t, s, nil, "apply", "-dir", in, "-promote", "production")
	is.Equal(r.stderr, "")
	is.Equal(r.code, 0) // the first run
	st := s.state(t)
	is.Equal(st["aa"].Active[prompts.Production], 1)
	is.Equal(st["zz/p"].Active[prompts.Production], 1)
	r = cli(t, s, nil, "render", "aa")
	is.Equal(r.stdout, "[user]\nA P Q\n")

	writeFiles(t, in, map[string]string{"bb.prompt": "B {{> elsewhere}}"})
	r = cli(t, s, nil, "apply", "-dir", in, "-promote", "production")
	is.Equal(r.code, 1) // a partial active nowhere: refused by the server
	is.True(strings.Contains(r.stderr, "elsewhere"))
	r = cli(t, s, nil, "apply", "-dir", in, "-promote", "production", "-allow-missing-partials")
	is.Equal(r.stderr, "")
	is.Equal(r.code, 0) // allowed
	is.Equal(s.state(t)["bb"].Active[prompts.Production], 1)
	is.Equal(cli(t, s, nil, "apply", "-dir", in, "-allow-missing-partials").code, 1) // only with -promote

	writeFiles(t, in, map[string]string{"c1.prompt": "{{> c2}}", "c2.prompt": "{{> c3}}", "c3.prompt": "{{> c1}}"})
	before := s.state(t)
	r = cli(t, s, nil, "apply", "-dir", in, "-promote", "production", "-allow-missing-partials")
	is.Equal(r.code, 1) // a cycle among the files
	is.True(strings.Contains(r.stderr, "c1 → c2 → c3 → c1"))
	is.Equal(s.state(t), before) // nothing changed
}
