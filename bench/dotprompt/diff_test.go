package dotpromptbench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestDifferential renders random templates, built from a grammar of
// Dotprompt's constructs, with random data, with both Go renderers and
// compares their messages (roles, text and media parts). Where they
// differ, Dotprompt's reference implementation (the npm package, on
// Handlebars.js) decides: its answers for the same templates are in
// testdata/reference.jsonl (js/render.mjs makes it), and ours must be
// the reference's every time, but for the reference's own quirks listed
// in referenceQuirks. Where theirs differs, README.md says why. The
// grammar leaves out what cannot be compared (README). The seeds are
// fixed: the same templates every run.
func TestDifferential(t *testing.T) {
	const n = 400
	ctx := context.Background()
	var dump *json.Encoder
	if *dumpTo != "" {
		f, err := os.Create(*dumpTo)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		dump = json.NewEncoder(f)
	}
	ref := loadReference(t)
	var same, theirsDeviate, quirks int
	for seed := range uint64(n) {
		g := newGen(seed)
		src := g.template()
		input := g.data()
		sum := caseSum(t, src, input)
		o, err := newOurs(src, input, nil, diffHistory)
		if err != nil {
			t.Fatalf("seed %d: ours does not parse: %v\n%s", seed, err, src)
		}
		th, err := newTheirs(src, input, nil, diffHistory, nil)
		if err != nil {
			t.Fatalf("seed %d: theirs does not compile: %v\n%s", seed, err, src)
		}
		ours, errO := o.messages(ctx)
		theirs, errT := th.messages()
		if dump != nil {
			if err := dump.Encode(dumped{Seed: seed, Sum: sum, Template: src, Input: input, History: diffHistory}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		r, ok := ref[seed]
		if !ok || r.Sum != sum {
			t.Fatalf("seed %d: testdata/reference.jsonl was made for other templates: make it again (README.md)", seed)
		}
		show := func() string {
			return fmt.Sprintf("template:\n%s\ninput: %s\nours (%v):\n%stheirs (%v):\n%sreference (%s):\n%s",
				src, describe(input), errO, formatMessages(ours), errT, formatMessages(theirs), r.Error, formatMessages(r.Messages))
		}
		oursRight := errO == nil && r.Error == "" && reflect.DeepEqual(ours, r.Messages)
		if why, quirk := referenceQuirks[seed]; quirk {
			if oursRight {
				t.Errorf("seed %d is listed as a quirk of the reference (%s), but ours renders as the reference does", seed, why)
			}
			quirks++
		} else if !oursRight {
			t.Errorf("seed %d: ours differs from the reference\n%s", seed, show())
		}
		switch {
		case errO == nil && errT == nil && reflect.DeepEqual(ours, theirs):
			same++
		default:
			theirsDeviate++
		}
	}
	if dump != nil {
		return
	}
	t.Logf("%d templates: theirs renders %d as ours does, and %d otherwise (README.md says why); ours renders all as the reference does but %d quirks of the reference",
		n, same, theirsDeviate, quirks)
}

// referenceQuirks are the seeds where Handlebars.js, under the reference
// implementation, renders what Handlebars itself does not mean to.
var referenceQuirks = map[uint64]string{
	101: quirkAdd,
	210: quirkAdd,
}

// quirkAdd: with noEscape (which Dotprompt sets), Handlebars.js 4.7
// joins two adjacent mustaches with JavaScript's +, so numbers and
// booleans are added: {{a}}{{b}} with 1 and 2 gives "3" (and "12"
// without noEscape). Both Go renderers print "12".
const quirkAdd = "adjacent mustaches of numbers or booleans are added (Handlebars.js with noEscape)"

var diffHistory = []msg{
	{Role: "user", Content: []part{{Text: "earlier question"}}},
	{Role: "model", Content: []part{{Text: "earlier answer"}}},
}

// dumpTo writes every case as JSON lines, for the reference
// implementation (js/render.mjs) to render.
var dumpTo = flag.String("dump", "", "write the differential test's cases to this file as JSON lines, for js/render.mjs")

type dumped struct {
	Seed     uint64         `json:"seed"`
	Sum      string         `json:"sum"`
	Template string         `json:"template"`
	Input    map[string]any `json:"input"`
	History  []msg          `json:"history"`
}

type reference struct {
	Seed     uint64 `json:"seed"`
	Sum      string `json:"sum"`
	Messages []msg  `json:"messages"`
	Error    string `json:"error"`
}

// caseSum identifies a case's template and input, so that a reference
// made for other ones is noticed.
func caseSum(t *testing.T, src string, input map[string]any) string {
	b, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(append(append([]byte(src), 0), b...))
	return hex.EncodeToString(h[:8])
}

func loadReference(t *testing.T) map[uint64]reference {
	t.Helper()
	f, err := os.Open("testdata/reference.jsonl")
	if err != nil {
		if *dumpTo != "" {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	out := map[uint64]reference{}
	dec := json.NewDecoder(f)
	for dec.More() {
		var r reference
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		for i := range r.Messages {
			if r.Messages[i].Content == nil {
				r.Messages[i].Content = []part{}
			}
		}
		out[r.Seed] = r
	}
	return out
}

// gen builds one random template and the data it renders with. Data
// names are fixed, so that paths find values (or, for "missing", none):
//
//	s1, s2   strings     n, f   numbers     b   bool     z   null
//	arr      a list of scalars              objs  a list of objects
//	obj      an object (name, n, inner.x)   one   an object of one key
//	link     a URL      missing  never given
type gen struct {
	r     *rand.Rand
	depth int
	scope []string // what `this` is in each open block: "root", "scalar", "object"
	json  bool     // the template uses {{json}}: its strings avoid < > & (see README)
}

func newGen(seed uint64) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, 0x5eed)), scope: []string{"root"}}
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) template() string {
	var b strings.Builder
	for range 1 + g.r.IntN(8) {
		g.node(&b)
	}
	return b.String()
}

var texts = []string{"Hello", " ", "\n", "  \n", "a <b> & \"c\" 'd'", "héllo ☃ ", "x", ".", "line one\nline two\n", "\t", "\\{{s1}}"}

func (g *gen) node(b *strings.Builder) {
	k := g.r.IntN(20)
	if g.depth >= 4 && k >= 12 {
		k = g.r.IntN(12)
	}
	switch {
	case k < 4:
		b.WriteString(g.pick(texts...))
	case k < 8:
		b.WriteString(g.tag(g.valuePath()))
	case k == 8:
		b.WriteString(g.pick("{{! a comment }}", "{{!-- a {{long}} comment --}}", "{{!}}", "\n{{! standalone }}\n"))
	case k == 9:
		b.WriteString(g.marker())
	case k == 10:
		g.json = true
		b.WriteString(g.tag("json " + g.jsonArg() + g.pick("", "", " indent=2")))
	case k == 11:
		b.WriteString(g.tag(g.pick("@index", "@first", "@last", "@key", "@root.s1")))
	default:
		g.block(b)
	}
}

// tag writes {{x}} with random whitespace control and, now and then, on
// a line of its own.
func (g *gen) tag(body string) string {
	return g.open() + body + g.close()
}

func (g *gen) open() string {
	if g.r.IntN(5) == 0 {
		return "{{~"
	}
	return "{{"
}

func (g *gen) close() string {
	if g.r.IntN(5) == 0 {
		return "~}}"
	}
	return "}}"
}

func (g *gen) nl() string { return g.pick("", "", "\n", " ", "\n  ") }

func (g *gen) marker() string {
	switch g.r.IntN(6) {
	case 0, 1:
		return g.nl() + `{{role "` + g.pick("system", "user", "model") + `"}}` + g.nl()
	case 2:
		return g.nl() + "{{history}}" + g.nl()
	case 3:
		return `{{media url="https://example.com/a.png"` + g.pick("", ` contentType="image/png"`) + "}}"
	case 4:
		return "{{media url=@root.link}}"
	default:
		return `{{section "` + g.pick("code", "output") + `"}}`
	}
}

// valuePath is a path to print: scalars, and in blocks their own.
func (g *gen) valuePath() string {
	switch g.scope[len(g.scope)-1] {
	case "scalar":
		return g.pick("this", ".", "../s1", "@root.n", "@index", "s1", "missing")
	case "object":
		return g.pick("name", "n", "this.name", "inner.x", "./name", "../s1", "@root.s2", "missing", "@key")
	}
	return g.pick("s1", "s2", "n", "f", "b", "z", "missing", "obj.name", "obj.inner.x", "obj/n", "objs.[0].name", "arr.[1]", "one.k", "this.s1")
}

// condPath is a value to test: anything but an empty object (README).
func (g *gen) condPath() string {
	if g.scope[len(g.scope)-1] == "object" {
		return g.pick("name", "n", "inner", "missing", "../b")
	}
	return g.pick("s1", "s2", "n", "f", "b", "z", "missing", "arr", "objs", "obj", "one", "obj.inner.x")
}

// jsonArg is a value that is there: the JSON of a missing value is
// "undefined" in JavaScript and "null" in Go (README).
func (g *gen) jsonArg() string {
	switch g.scope[len(g.scope)-1] {
	case "scalar":
		return g.pick("this", "@root.arr", "@root.s1")
	case "object":
		return g.pick("this", "@root.obj", "@root.one")
	}
	return g.pick("s1", "n", "b", "z", "obj", "arr", "objs", "one", "obj.name", "this")
}

// scalarArg is an argument of ifEquals: strings, booleans and null on
// both sides, all there (a missing value is undefined in JavaScript,
// which is not null: README); no number literal and no object (README).
func (g *gen) scalarArg() string {
	return g.pick("@root.s1", "@root.s2", "@root.b", "@root.z", `"x"`, `""`, "true", "false", "@root.obj.name")
}

func (g *gen) block(b *strings.Builder) {
	g.depth++
	defer func() { g.depth-- }()
	kind := g.r.IntN(6)
	var name, open, inner string
	switch kind {
	case 0:
		name, open, inner = "if", "#if "+g.condPath(), g.scope[len(g.scope)-1]
	case 1:
		name, open, inner = "unless", "#unless "+g.condPath(), g.scope[len(g.scope)-1]
	case 2:
		name = "each"
		switch g.r.IntN(3) {
		case 0:
			open, inner = "#each arr", "scalar"
		case 1:
			open, inner = "#each objs", "object"
		default:
			open, inner = "#each "+g.pick("one", "missing", "z"), "scalar"
		}
	case 3:
		name, open, inner = "with", "#with "+g.pick("obj", "obj.inner", "one", "missing", "objs.[1]"), "object"
	case 4:
		name, open, inner = "ifEquals", "#ifEquals "+g.scalarArg()+" "+g.scalarArg(), g.scope[len(g.scope)-1]
	default:
		name, open, inner = "unlessEquals", "#unlessEquals "+g.scalarArg()+" "+g.scalarArg(), g.scope[len(g.scope)-1]
	}
	b.WriteString(g.nl())
	b.WriteString(g.tag(open))
	b.WriteString(g.nl())
	g.scope = append(g.scope, inner)
	for range 1 + g.r.IntN(3) {
		g.node(b)
	}
	g.scope = g.scope[:len(g.scope)-1]
	if g.r.IntN(3) == 0 {
		b.WriteString(g.nl())
		b.WriteString(g.tag("else"))
		b.WriteString(g.nl())
		g.node(b)
	}
	b.WriteString(g.nl())
	b.WriteString(g.tag("/" + name))
	b.WriteString(g.nl())
}

func (g *gen) str() any {
	if g.json {
		return g.pick("", "x", "hello world", "héllo ☃", "two\nlines", "  spaced  ", `quote " and \ backslash`)
	}
	return g.pick("", "x", "hello world", "héllo ☃", "two\nlines", "  spaced  ", "a <b> & \"c\"")
}

// item is a scalar other than null: a list item or one.k, which blocks
// make `this` (Handlebars.js renders a null `this` in a helper's block
// as an empty object: README).
func (g *gen) item() any {
	for {
		if v := g.scalar(); v != nil {
			return v
		}
	}
}

func (g *gen) scalar() any {
	switch g.r.IntN(4) {
	case 0:
		return g.str()
	case 1:
		return []float64{0, 1, -3, 2.5, 42, 1000000}[g.r.IntN(6)]
	case 2:
		return g.r.IntN(2) == 0
	default:
		return nil
	}
}

func (g *gen) object() map[string]any {
	o := map[string]any{"name": g.str(), "n": g.scalar()}
	if g.r.IntN(2) == 0 {
		o["inner"] = map[string]any{"x": g.scalar()}
	}
	return o
}

func (g *gen) data() map[string]any {
	in := map[string]any{
		"s1": g.str(), "s2": g.str(), "link": "https://example.com/b.jpg",
		"n": []float64{0, 1, 7, -2, 3.25}[g.r.IntN(5)], "f": g.scalar(),
		"b": g.r.IntN(2) == 0, "z": nil,
		"obj": g.object(),
		"one": map[string]any{"k": g.item()},
	}
	arr := []any{}
	for range g.r.IntN(4) {
		arr = append(arr, g.item())
	}
	in["arr"] = arr
	objs := []any{}
	for range g.r.IntN(4) {
		objs = append(objs, g.object())
	}
	in["objs"] = objs
	return in
}

// describe is for failure messages.
func describe(v any) string { return fmt.Sprintf("%#v", v) }
