package prompts_test

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/matryer/is"
)

// TestDocsLinks checks that every relative link in README.md and the
// guides in docs/ leads to a file of the repository, and every #anchor to
// a heading of the Markdown file it names, as GitHub renders them.
func TestDocsLinks(t *testing.T) {
	is := is.New(t)
	fsys := os.DirFS(".")
	guides, err := fs.Glob(fsys, "docs/*.md")
	is.NoErr(err)
	is.True(len(guides) > 0) // the guides are in docs/
	for _, problem := range checkDocLinks(fsys, append([]string{"README.md"}, guides...)) {
		t.Error(problem)
	}
}

// The check itself finds each kind of broken link, and takes what GitHub
// takes.
func TestDocsLinksChecker(t *testing.T) {
	is := is.New(t)
	fsys := fstest.MapFS{
		"README.md": {Data: []byte("# Title\n\n" +
			"[ok](docs/a.md) [ok anchor](docs/a.md#the-go-api-in-short) [ok self](#title)\n" +
			"[ok across\nlines](docs/a.md#for-people-get-render-promote) ![ok image](docs/shot.png)\n" +
			"[external](https://example.com/x.md) <https://example.com> [mail](mailto:a@b.c)\n" +
			"[missing file](docs/none.md) [missing anchor](docs/a.md#nowhere)\n" +
			"[missing self](#no-such-heading) ![missing image](docs/none.png)\n" +
			"[outside](../elsewhere.md) [anchor in code](docs/a.md#in-code)\n" +
			"[ref]: docs/gone.md\n" +
			"`[in a code span](docs/none.md)`\n" +
			"```sh\n# not a heading\n[in a fence](docs/none.md)\n```\n")},
		"docs/a.md": {Data: []byte("# The `Go` API, in short\n\n" +
			"## For people: get, render, promote\n\n" +
			"[up](../README.md#title) [up missing](../README.md#not-a-heading)\n" +
			"```\n## In code\n```\n")},
		"docs/shot.png": {Data: []byte("png")},
	}
	got := checkDocLinks(fsys, []string{"README.md", "docs/a.md"})
	want := []string{
		`README.md: link "docs/none.md": no file docs/none.md`,
		`README.md: link "docs/a.md#nowhere": docs/a.md has no heading #nowhere`,
		`README.md: link "#no-such-heading": README.md has no heading #no-such-heading`,
		`README.md: link "docs/none.png": no file docs/none.png`,
		`README.md: link "../elsewhere.md": leads outside the repository`,
		`README.md: link "docs/a.md#in-code": docs/a.md has no heading #in-code`,
		`README.md: link "docs/gone.md": no file docs/gone.md`,
		`docs/a.md: link "../README.md#not-a-heading": README.md has no heading #not-a-heading`,
	}
	is.Equal(got, want) // the broken links, and only those
}

var (
	// A fence opens and closes a code block: three or more backticks or
	// tildes, indented by at most three spaces.
	fenceLine = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	// An ATX heading: one to six #, a space, the text, optional closing #s.
	headingLine = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	// A code span; it may run across a line break.
	codeSpan = regexp.MustCompile("`[^`]*`")
	// An inline link or image: [text](target) or [text](target "title");
	// the text may run across lines.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)`)
	// A reference definition: [label]: target.
	refDefinition = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)>?`)
	// A URL scheme (https:, mailto:): not a relative link.
	urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// checkDocLinks returns a line for every relative link of the Markdown
// files that leads nowhere: to a file that does not exist, outside fsys,
// or to an anchor that no heading of its Markdown file makes.
func checkDocLinks(fsys fs.FS, files []string) []string {
	var problems []string
	anchors := map[string]map[string]bool{} // by file, read once
	anchorsOf := func(name string) (map[string]bool, error) {
		if a, ok := anchors[name]; ok {
			return a, nil
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		_, headings := splitMarkdown(string(data))
		a := map[string]bool{}
		for _, slug := range headings {
			a[slug] = true
		}
		anchors[name] = a
		return a, nil
	}
	for _, file := range files {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", file, err))
			continue
		}
		prose, _ := splitMarkdown(string(data))
		prose = codeSpan.ReplaceAllString(prose, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(prose, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range refDefinition.FindAllStringSubmatch(prose, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if problem := checkDocLink(fsys, file, target, anchorsOf); problem != "" {
				problems = append(problems, fmt.Sprintf("%s: link %q: %s", file, target, problem))
			}
		}
	}
	return problems
}

// checkDocLink says what is wrong with one link of file, or "".
func checkDocLink(fsys fs.FS, file, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if urlScheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return "" // not relative: not ours to check
	}
	p, anchor, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(p)
	if err != nil {
		return "not a valid path: " + err.Error()
	}
	name := file
	if p != "" {
		if strings.HasPrefix(p, "/") {
			return "absolute; write it relative to " + file
		}
		name = path.Join(path.Dir(file), p)
		if name == ".." || strings.HasPrefix(name, "../") {
			return "leads outside the repository"
		}
		if _, err := fs.Stat(fsys, name); err != nil {
			return "no file " + name
		}
	}
	if anchor == "" {
		return ""
	}
	if path.Ext(name) != ".md" {
		return "an anchor in " + name + ", which is not Markdown, cannot be checked"
	}
	a, err := anchorsOf(name)
	if err != nil {
		return err.Error()
	}
	if !a[anchor] {
		return name + " has no heading #" + anchor
	}
	return ""
}

// splitMarkdown returns the text of md outside fenced code blocks, and
// the anchors of its headings in order, made as GitHub makes them: a
// second heading with the same anchor gets -1, a third -2.
func splitMarkdown(md string) (prose string, anchors []string) {
	var b strings.Builder
	seen := map[string]int{}
	fence := ""
	for line := range strings.Lines(md) {
		if m := fenceLine.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
			case m[1][0] == fence[0] && len(m[1]) >= len(fence):
				fence = ""
			}
			b.WriteString("\n")
			continue
		}
		if fence != "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString(line)
		if m := headingLine.FindStringSubmatch(strings.TrimRight(line, "\r\n")); m != nil {
			slug := headingAnchor(m[1])
			if n, ok := seen[slug]; ok {
				seen[slug] = n + 1
				slug = fmt.Sprintf("%s-%d", slug, n+1)
			} else {
				seen[slug] = 0
			}
			anchors = append(anchors, slug)
		}
	}
	return b.String(), anchors
}

// headingAnchor is the anchor GitHub gives a heading: its text as
// rendered (links as their text, no backticks or emphasis marks), in
// lower case, without punctuation but - and _, each space a -.
func headingAnchor(heading string) string {
	heading = inlineLink.ReplaceAllStringFunc(heading, func(link string) string {
		text, _, _ := strings.Cut(strings.TrimPrefix(link, "!"), "](")
		return strings.TrimPrefix(text, "[")
	})
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}
