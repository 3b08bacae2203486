package dotprompt

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// MaxNesting is how deeply blocks (and subexpressions) may nest in one
// template.
const MaxNesting = 64

// ParseError is a template that does not parse. Line and Column are
// 1-based; Column counts bytes.
type ParseError struct {
	Line, Column int
	Msg          string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Template is a parsed template. It is immutable and safe for concurrent
// use: parse a version once and render it many times.
type Template struct {
	root     []*node
	vars     []string
	partials []string
	readsAll bool
	size     int // the source's length: about what a render writes, to size its buffer

	renderers sync.Pool // of *renderer, zero, for the next render
}

// Variables returns the top-level input names the template reads (first
// segments of paths evaluated against the input, outside #each/#with
// bodies and block parameters, plus @root.NAME), sorted, each once.
// Names read by partials are not included: see Partials.
func (t *Template) Variables() []string { return append([]string(nil), t.vars...) }

// Partials returns the names of the partials the template includes,
// sorted, each once.
func (t *Template) Partials() []string { return append([]string(nil), t.partials...) }

// ReadsAll reports whether the template reads the whole input as a value
// (for example {{json this}} at the top level), so that every input name
// counts as used.
func (t *Template) ReadsAll() bool { return t.readsAll }

type nodeKind uint8

const (
	nText nodeKind = iota
	nMustache
	nBlock
	nPartial
)

type node struct {
	kind nodeKind
	text string
	// mustache and block: the call
	call *call
	// block
	inverted    bool // {{^x}}...{{/x}}
	blockParams []string
	body, inv   []*node
	// partial
	name   string
	ctxArg *expr
	indent string
}

type call struct {
	head   *expr // path (helper name or value) or literal
	params []*expr
	hash   []hashPair
	name   string // the helper head names, "" for none: helper()
}

// newCall returns the call of head, with the helper it names.
func newCall(head *expr) *call {
	c := &call{head: head}
	if h := head; h.kind == ePath && !h.data && h.parents == 0 && !h.this && len(h.segs) == 1 {
		if _, ok := helpers[h.segs[0]]; ok {
			c.name = h.segs[0]
		}
	}
	return c
}

type hashPair struct {
	key string
	val *expr
}

type exprKind uint8

const (
	ePath exprKind = iota
	eString
	eNumber
	eBool
	eNull
	eSub
)

type expr struct {
	kind exprKind
	// path
	data    bool
	parents int
	this    bool
	segs    []string
	// literals
	str string
	num float64
	b   bool
	sub *call
	lit any // a string's or a number's value, made once: eval returns it
}

// helper reports the helper a call names, if any.
func (c *call) helper() string { return c.name }

var helpers = map[string]bool{
	"if": true, "unless": true, "each": true, "with": true,
	"ifEquals": true, "unlessEquals": true,
	"role": false, "history": false, "media": false, "section": false, "json": false,
	"lookup": false,
}

// ---- lexing into a flat list of text and tags ----

type tagKind uint8

const (
	tMustache tagKind = iota
	tOpen             // {{#x}}
	tOpenInv          // {{^x}}
	tClose            // {{/x}}
	tElse             // {{else}} / {{^}} / {{else if x}}
	tComment
	tPartial
)

type item struct {
	isTag      bool
	text       string // text value (after stripping)
	orig       string
	kind       tagKind
	body       string // tag contents between type char and close
	stripL     bool
	stripR     bool
	standalone bool
	indent     string
	off        int // byte offset of the tag in the source, for positions
	bodyOff    int
}

type parser struct {
	src      string
	items    []item
	i        int
	depth    int
	ctxDepth int
	bparams  [][]string
	lastStop *item
	vars     map[string]bool
	partials map[string]bool
	readsAll bool
}

func (p *parser) errAt(off int, format string, a ...any) *ParseError {
	if off > len(p.src) {
		off = len(p.src)
	}
	line := 1 + strings.Count(p.src[:off], "\n")
	col := off - strings.LastIndexByte(p.src[:off], '\n')
	return &ParseError{Line: line, Column: col, Msg: fmt.Sprintf(format, a...)}
}

func (p *parser) lex() error {
	s := p.src
	pos := 0
	text := strings.Builder{}
	textStart := 0
	flush := func() {
		p.items = append(p.items, item{text: text.String(), orig: text.String(), off: textStart})
		text.Reset()
	}
	for pos < len(s) {
		j := strings.Index(s[pos:], "{{")
		if j < 0 {
			text.WriteString(s[pos:])
			break
		}
		j += pos
		// escapes: \{{ is literal up to the next {{, \{{ or \\{{ (as
		// Handlebars' lexer reads it); \\{{ is a backslash then a tag. The
		// backslashes must be in this stretch of text: an escaped stretch
		// stops before those of the next escape.
		if j > pos && s[j-1] == '\\' {
			if j-1 > pos && s[j-2] == '\\' {
				text.WriteString(s[pos : j-1])
			} else {
				text.WriteString(s[pos : j-1])
				k := strings.Index(s[j+2:], "{{")
				if k < 0 {
					text.WriteString(s[j:])
					break
				}
				end := j + 2 + k
				for n := 0; n < 2 && end > j+2 && s[end-1] == '\\'; n++ {
					end--
				}
				text.WriteString(s[j:end])
				pos = end
				continue
			}
		} else {
			text.WriteString(s[pos:j])
		}
		flush()
		it, end, err := p.lexTag(j)
		if err != nil {
			return err
		}
		p.items = append(p.items, it)
		pos = end
		textStart = end
	}
	flush()
	return nil
}

func (p *parser) lexTag(start int) (item, int, error) {
	s := p.src
	it := item{isTag: true, off: start}
	pos := start + 2
	triple := false
	if pos < len(s) && s[pos] == '{' {
		triple = true
		pos++
	}
	if pos < len(s) && s[pos] == '~' {
		it.stripL = true
		pos++
	}
	if !triple && pos < len(s) && s[pos] == '!' {
		it.kind = tComment
		long := strings.HasPrefix(s[pos:], "!--")
		closeAt := -1
		if long {
			k := strings.Index(s[pos+3:], "--")
			for k >= 0 {
				q := pos + 3 + k + 2
				if strings.HasPrefix(s[q:], "}}") {
					closeAt = q
					break
				}
				if strings.HasPrefix(s[q:], "~}}") {
					closeAt = q
					break
				}
				n := strings.Index(s[q-1:], "--")
				if n < 0 {
					break
				}
				k = q - 1 + n - (pos + 3)
			}
		} else {
			k := strings.Index(s[pos:], "}}")
			if k >= 0 {
				closeAt = pos + k
				if closeAt > pos && s[closeAt-1] == '~' {
					closeAt--
				}
			}
		}
		if closeAt < 0 {
			return it, 0, p.errAt(start, "unclosed comment")
		}
		if s[closeAt] == '~' {
			it.stripR = true
			closeAt++
		}
		return it, closeAt + 2, nil
	}
	// find the closing }} (outside string literals)
	end := -1
	inStr := byte(0)
	for k := pos; k < len(s); k++ {
		c := s[k]
		if inStr != 0 {
			if c == '\\' {
				k++
			} else if c == inStr {
				inStr = 0
			}
			continue
		}
		if c == '"' || c == '\'' {
			inStr = c
			continue
		}
		if c == '}' && k+1 < len(s) && s[k+1] == '}' {
			end = k
			break
		}
		if c == '{' && k+1 < len(s) && s[k+1] == '{' {
			break
		}
	}
	if end < 0 {
		return it, 0, p.errAt(start, "unclosed tag: missing }}")
	}
	inner := end
	if inner > pos && s[inner-1] == '~' {
		it.stripR = true
		inner--
	}
	after := end + 2
	if triple {
		if after >= len(s) || s[after] != '}' {
			return it, 0, p.errAt(start, "unclosed tag: {{{ needs }}}")
		}
		after++
	}
	body := s[pos:inner]
	bodyOff := pos
	kind := tMustache
	if !triple && len(body) > 0 {
		switch body[0] {
		case '#':
			if strings.HasPrefix(body, "#>") || strings.HasPrefix(body, "#*") {
				return it, 0, p.errAt(start, "partial blocks and inline partials are not supported")
			}
			kind, body, bodyOff = tOpen, body[1:], bodyOff+1
		case '^':
			if strings.TrimSpace(body[1:]) == "" {
				kind, body = tElse, ""
			} else {
				kind, body, bodyOff = tOpenInv, body[1:], bodyOff+1
			}
		case '/':
			kind, body, bodyOff = tClose, body[1:], bodyOff+1
		case '>':
			kind, body, bodyOff = tPartial, body[1:], bodyOff+1
		case '&':
			body, bodyOff = body[1:], bodyOff+1
		}
	}
	if kind == tMustache && !triple {
		t := strings.TrimLeft(body, " \t\r\n")
		if t == "else" || strings.HasPrefix(t, "else ") || strings.HasPrefix(t, "else\t") || strings.HasPrefix(t, "else\n") {
			kind = tElse
			bodyOff += len(body) - len(t) + 4
			body = t[4:]
		}
	}
	it.kind, it.body, it.bodyOff = kind, body, bodyOff
	return it, after, nil
}

var spaceOnly = func(s string) bool { return strings.TrimSpace(s) == "" }

// whitespace applies ~ and Handlebars' standalone-line rules.
func (p *parser) whitespace() {
	its := p.items
	// items alternate text, tag, text, tag, ..., text.
	for i := 1; i < len(its); i += 2 {
		t := &its[i]
		switch t.kind {
		case tOpen, tOpenInv, tClose, tElse, tComment, tPartial:
		default:
			continue
		}
		prev, next := its[i-1].orig, its[i+1].orig
		// prev: whitespace after the last newline, or the template start.
		var prevOK bool
		if k := strings.LastIndexAny(prev, "\n"); k >= 0 {
			prevOK = spaceOnly(prev[k:])
		} else {
			prevOK = i == 1 && spaceOnly(prev)
		}
		if i > 1 && prev == "" {
			prevOK = false
		}
		var nextOK bool
		if k := strings.IndexByte(next, '\n'); k >= 0 {
			nextOK = spaceOnly(next[:k])
		} else {
			nextOK = i == len(its)-2 && spaceOnly(next)
		}
		if i < len(its)-2 && next == "" {
			nextOK = false
		}
		t.standalone = prevOK && nextOK
	}
	for i := 1; i < len(its); i += 2 {
		t := &its[i]
		if t.stripL {
			its[i-1].text = strings.TrimRight(its[i-1].text, " \t\r\n\f\v")
		}
		if t.stripR {
			its[i+1].text = strings.TrimLeft(its[i+1].text, " \t\r\n\f\v")
		}
		if t.standalone {
			n := its[i+1].text
			n = strings.TrimLeft(n, " \t")
			n = strings.TrimPrefix(n, "\r")
			n = strings.TrimPrefix(n, "\n")
			its[i+1].text = n
			pv := its[i-1].text
			trimmed := strings.TrimRight(pv, " \t")
			if t.kind == tPartial {
				t.indent = pv[len(trimmed):]
			}
			its[i-1].text = trimmed
		}
	}
}

// Parse parses a template body as it is to be rendered (see Body for how
// Dotprompt trims a source first).
func Parse(src string) (*Template, error) {
	p := &parser{src: src, vars: map[string]bool{}, partials: map[string]bool{}}
	if err := p.lex(); err != nil {
		return nil, err
	}
	p.whitespace()
	nodes, stop, err := p.program()
	if err != nil {
		return nil, err
	}
	if stop != nil {
		return nil, p.errAt(stop.off, "unexpected {{%s}} with no open block", tagWord(stop))
	}
	t := &Template{root: nodes, readsAll: p.readsAll, size: len(src)}
	t.vars = sortedKeys(p.vars)
	t.partials = sortedKeys(p.partials)
	return t, nil
}

func tagWord(it *item) string {
	if it.kind == tElse {
		return "else"
	}
	return "/" + strings.TrimSpace(it.body)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// program parses items until a close or else tag, which it returns.
func (p *parser) program() ([]*node, *item, error) {
	var out []*node
	for p.i < len(p.items) {
		it := &p.items[p.i]
		p.i++
		if !it.isTag {
			if it.text != "" {
				out = append(out, &node{kind: nText, text: it.text})
			}
			continue
		}
		switch it.kind {
		case tComment:
		case tClose, tElse:
			return out, it, nil
		case tMustache:
			lx := p.newLexer(it)
			c, err := p.parseCall(lx, false)
			if err != nil {
				return nil, nil, err
			}
			if err := lx.end(); err != nil {
				return nil, nil, err
			}
			out = append(out, &node{kind: nMustache, call: c})
		case tPartial:
			n, err := p.parsePartial(it)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, n)
		case tOpen, tOpenInv:
			n, err := p.parseBlock(it)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, n)
		}
	}
	return out, nil, nil
}

func (p *parser) parsePartial(it *item) (*node, error) {
	lx := p.newLexer(it)
	lx.skip()
	if lx.peek() == '(' {
		return nil, lx.err("dynamic partial names are not supported")
	}
	name := lx.word()
	// A path names a partial as written, as in Handlebars: {{> a/b.c}}
	// is the partial "a/b.c".
	for name != "" && (lx.peek() == '/' || lx.peek() == '.') && lx.pos+1 < len(lx.s) && isIDChar(lx.s[lx.pos+1]) {
		lx.pos++
		name += lx.s[lx.pos-1:lx.pos] + lx.word()
	}
	if name == "" {
		if lx.peek() == '"' || lx.peek() == '\'' {
			e, err := lx.literal()
			if err != nil {
				return nil, err
			}
			name = e.str
		}
	}
	if name == "" {
		return nil, lx.err("partial name expected")
	}
	n := &node{kind: nPartial, name: name, indent: it.indent}
	p.partials[name] = true
	for {
		lx.skip()
		if lx.atEnd() {
			break
		}
		if k := lx.hashKey(); k != "" {
			v, err := p.parseExpr(lx)
			if err != nil {
				return nil, err
			}
			n.call = addHash(n.call, k, v)
			continue
		}
		if n.ctxArg != nil || n.call != nil {
			return nil, lx.err("a partial takes one context argument and hash arguments")
		}
		e, err := p.parseExpr(lx)
		if err != nil {
			return nil, err
		}
		n.ctxArg = e
	}
	if n.ctxArg == nil && p.ctxDepth == 0 {
		// The partial reads the current (top-level) context: its own
		// variables are top-level names too; the caller merges them.
	}
	return n, nil
}

func addHash(c *call, k string, v *expr) *call {
	if c == nil {
		c = &call{}
	}
	c.hash = append(c.hash, hashPair{k, v})
	return c
}

func (p *parser) parseBlock(it *item) (*node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > MaxNesting {
		return nil, p.errAt(it.off, "blocks nest deeper than %d", MaxNesting)
	}
	lx := p.newLexer(it)
	c, err := p.parseCall(lx, true)
	if err != nil {
		return nil, err
	}
	n := &node{kind: nBlock, call: c, inverted: it.kind == tOpenInv}
	lx.skip()
	if lx.keyword("as") {
		lx.skip()
		if lx.peek() != '|' {
			return nil, lx.err("block parameters: expected |")
		}
		lx.pos++
		for {
			lx.skip()
			if lx.peek() == '|' {
				lx.pos++
				break
			}
			w := lx.word()
			if w == "" {
				return nil, lx.err("block parameters: expected a name or |")
			}
			n.blockParams = append(n.blockParams, w)
		}
	}
	if err := lx.end(); err != nil {
		return nil, err
	}
	name := c.helper()
	if name == "" {
		if c.head.kind != ePath || len(c.params) > 0 || len(c.hash) > 0 {
			return nil, p.errAt(it.off, "unknown block helper")
		}
		name = strings.Join(c.head.segs, ".")
	} else if !helpers[name] {
		return nil, p.errAt(it.off, "%s is not a block helper", name)
	}
	// {{#name}} sections change the context only when name's value is an
	// object or a list, which is known only at render time: the names in
	// their bodies count as top-level too (a superset), so that a value
	// a template reads is never called unused.
	changes := name == "each" || name == "with"
	if changes {
		p.ctxDepth++
		p.bparams = append(p.bparams, n.blockParams)
	}
	body, stop, err := p.program()
	if changes {
		p.ctxDepth--
		p.bparams = p.bparams[:len(p.bparams)-1]
	}
	if err != nil {
		return nil, err
	}
	n.body = body
	if stop == nil {
		return nil, p.errAt(it.off, "{{#%s}} is never closed", name)
	}
	if stop.kind == tElse {
		chain := strings.TrimSpace(stop.body)
		if chain != "" {
			// {{else if x}}: an inverse that is one nested block, closed by our close.
			fake := item{isTag: true, kind: tOpen, body: stop.body, bodyOff: stop.bodyOff, off: stop.off}
			inner, err := p.parseChained(&fake)
			if err != nil {
				return nil, err
			}
			n.inv = []*node{inner}
			stop = p.lastStop
		} else {
			inv, st, err := p.program()
			if err != nil {
				return nil, err
			}
			n.inv = inv
			stop = st
		}
	}
	if stop == nil || stop.kind != tClose {
		return nil, p.errAt(it.off, "{{#%s}} is never closed", name)
	}
	closeName := strings.TrimSpace(stop.body)
	if closeName != name {
		return nil, p.errAt(stop.off, "{{/%s}} does not match {{#%s}}", closeName, name)
	}
	return n, nil
}

// parseChained parses "else if x" chains: it parses the block up to, and
// consuming, the outer close tag, which it leaves in p.lastStop.
func (p *parser) parseChained(it *item) (*node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > MaxNesting {
		return nil, p.errAt(it.off, "blocks nest deeper than %d", MaxNesting)
	}
	lx := p.newLexer(it)
	c, err := p.parseCall(lx, true)
	if err != nil {
		return nil, err
	}
	name := c.helper()
	if name == "" || !helpers[name] || name == "each" || name == "with" {
		return nil, p.errAt(it.off, "else must be followed by if, unless, ifEquals or unlessEquals")
	}
	if err := lx.end(); err != nil {
		return nil, err
	}
	n := &node{kind: nBlock, call: c}
	body, stop, err := p.program()
	if err != nil {
		return nil, err
	}
	n.body = body
	if stop != nil && stop.kind == tElse {
		if strings.TrimSpace(stop.body) != "" {
			inner, err := p.parseChained(&item{isTag: true, kind: tOpen, body: stop.body, bodyOff: stop.bodyOff, off: stop.off})
			if err != nil {
				return nil, err
			}
			n.inv = []*node{inner}
			return n, nil
		}
		inv, st, err := p.program()
		if err != nil {
			return nil, err
		}
		n.inv = inv
		stop = st
	}
	p.lastStop = stop
	return n, nil
}

// ---- expressions ----

type lexer struct {
	p    *parser
	s    string
	pos  int
	base int
}

func (p *parser) newLexer(it *item) *lexer { return &lexer{p: p, s: it.body, base: it.bodyOff} }

func (l *lexer) err(format string, a ...any) error {
	return l.p.errAt(l.base+l.pos, format, a...)
}
func (l *lexer) skip() {
	for l.pos < len(l.s) && strings.IndexByte(" \t\r\n\f", l.s[l.pos]) >= 0 {
		l.pos++
	}
}
func (l *lexer) atEnd() bool { l.skip(); return l.pos >= len(l.s) || l.s[l.pos] == ')' }
func (l *lexer) peek() byte {
	if l.pos < len(l.s) {
		return l.s[l.pos]
	}
	return 0
}
func (l *lexer) end() error {
	l.skip()
	if l.pos < len(l.s) {
		return l.err("unexpected %q", l.s[l.pos:])
	}
	return nil
}

func isIDChar(c byte) bool {
	if c >= 0x80 {
		return true
	}
	return !(c <= ' ' || strings.IndexByte("!\"#%&'()*+,./;<=>@[\\]^`{|}~", c) >= 0)
}

func (l *lexer) word() string {
	st := l.pos
	for l.pos < len(l.s) && isIDChar(l.s[l.pos]) {
		l.pos++
	}
	return l.s[st:l.pos]
}

func (l *lexer) keyword(k string) bool {
	if strings.HasPrefix(l.s[l.pos:], k) && (l.pos+len(k) == len(l.s) || !isIDChar(l.s[l.pos+len(k)])) {
		l.pos += len(k)
		return true
	}
	return false
}

// hashKey consumes "key=" if present.
func (l *lexer) hashKey() string {
	st := l.pos
	w := l.word()
	if w != "" {
		q := l.pos
		for q < len(l.s) && (l.s[q] == ' ' || l.s[q] == '\t') {
			q++
		}
		if q < len(l.s) && l.s[q] == '=' {
			l.pos = q + 1
			l.skip()
			return w
		}
	}
	l.pos = st
	return ""
}

func (p *parser) parseCall(l *lexer, block bool) (*call, error) {
	l.skip()
	headPos := l.pos
	head, err := p.parseExprNoRecord(l)
	if err != nil {
		return nil, err
	}
	c := newCall(head)
	for {
		l.skip()
		if l.atEnd() || (block && l.keywordAhead("as")) {
			break
		}
		if k := l.hashKey(); k != "" {
			v, err := p.parseExpr(l)
			if err != nil {
				return nil, err
			}
			c.hash = append(c.hash, hashPair{k, v})
			continue
		}
		if len(c.hash) > 0 {
			return nil, l.err("positional argument after hash arguments")
		}
		e, err := p.parseExpr(l)
		if err != nil {
			return nil, err
		}
		c.params = append(c.params, e)
	}
	name := c.helper()
	if name != "" {
		if err := checkArity(c, name); err != "" {
			l.pos = headPos
			return nil, l.err("%s", err)
		}
	}
	if name == "" {
		if head.kind == ePath && !head.data && head.parents == 0 && !head.this && len(head.segs) == 1 && (len(c.params) > 0 || len(c.hash) > 0) {
			l.pos = headPos
			return nil, l.err("unknown helper %q", head.segs[0])
		}
		if len(c.params) > 0 || len(c.hash) > 0 {
			return nil, l.err("only helpers take arguments")
		}
		p.record(head)
	}
	return c, nil
}

func (l *lexer) keywordAhead(k string) bool {
	st := l.pos
	ok := l.keyword(k)
	if ok {
		l.skip()
		ok = l.peek() == '|'
	}
	l.pos = st
	return ok
}

func (p *parser) parseExpr(l *lexer) (*expr, error) {
	e, err := p.parseExprNoRecord(l)
	if err == nil {
		p.record(e)
	}
	return e, err
}

func (p *parser) record(e *expr) {
	if e.kind != ePath {
		return
	}
	if e.data {
		if len(e.segs) >= 2 && e.segs[0] == "root" {
			p.vars[e.segs[1]] = true
		} else if len(e.segs) == 1 && e.segs[0] == "root" {
			p.readsAll = true
		}
		return
	}
	depth := p.ctxDepth - e.parents
	if depth < 0 {
		depth = 0
	}
	if depth != 0 {
		return
	}
	if e.parents == 0 {
		for _, bp := range p.bparams {
			for _, b := range bp {
				if len(e.segs) > 0 && !e.this && e.segs[0] == b {
					return
				}
			}
		}
	}
	if len(e.segs) == 0 {
		p.readsAll = true
		return
	}
	p.vars[e.segs[0]] = true
}

func (p *parser) parseExprNoRecord(l *lexer) (*expr, error) {
	l.skip()
	c := l.peek()
	switch {
	case c == 0:
		return nil, l.err("expression expected")
	case c == '(':
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > MaxNesting {
			return nil, l.err("subexpressions nest deeper than %d", MaxNesting)
		}
		l.pos++
		sc, err := p.parseCall(l, false)
		if err != nil {
			return nil, err
		}
		l.skip()
		if l.peek() != ')' {
			return nil, l.err("expected )")
		}
		l.pos++
		if sc.helper() == "" {
			return nil, l.err("a subexpression must call a helper")
		}
		return &expr{kind: eSub, sub: sc}, nil
	case c == '"' || c == '\'':
		return l.literal()
	case c == '-' || (c >= '0' && c <= '9'):
		st := l.pos
		if c == '-' {
			l.pos++
		}
		for l.pos < len(l.s) && (l.s[l.pos] >= '0' && l.s[l.pos] <= '9' || l.s[l.pos] == '.') {
			l.pos++
		}
		if l.pos == len(l.s) || !isIDChar(l.s[l.pos]) {
			f, err := strconv.ParseFloat(l.s[st:l.pos], 64)
			if err == nil {
				return &expr{kind: eNumber, num: f, lit: f}, nil
			}
		}
		l.pos = st
	}
	st := l.pos
	if l.keyword("true") {
		return &expr{kind: eBool, b: true}, nil
	}
	if l.keyword("false") {
		return &expr{kind: eBool}, nil
	}
	if l.keyword("null") || l.keyword("undefined") {
		return &expr{kind: eNull}, nil
	}
	l.pos = st
	return l.path()
}

func (l *lexer) literal() (*expr, error) {
	q := l.s[l.pos]
	l.pos++
	var b strings.Builder
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		if c == '\\' && l.pos+1 < len(l.s) && l.s[l.pos+1] == q {
			b.WriteByte(q)
			l.pos += 2
			continue
		}
		if c == q {
			l.pos++
			str := b.String()
			return &expr{kind: eString, str: str, lit: str}, nil
		}
		b.WriteByte(c)
		l.pos++
	}
	return nil, l.err("unterminated string")
}

func (l *lexer) path() (*expr, error) {
	e := &expr{kind: ePath}
	if l.peek() == '@' {
		e.data = true
		l.pos++
	}
	for strings.HasPrefix(l.s[l.pos:], "../") {
		e.parents++
		l.pos += 3
	}
	first := true
	for {
		var seg string
		switch {
		case l.peek() == '[':
			k := strings.IndexByte(l.s[l.pos:], ']')
			if k < 0 {
				return nil, l.err("unclosed [")
			}
			seg = l.s[l.pos+1 : l.pos+k]
			l.pos += k + 1
			e.segs = append(e.segs, seg)
		case first && !e.data && (strings.HasPrefix(l.s[l.pos:], "..") && e.parents == 0):
			l.pos += 2
			e.parents++
		case first && !e.data && l.peek() == '.' && (l.pos+1 == len(l.s) || l.s[l.pos+1] != '.'):
			l.pos++
			e.this = true
		default:
			seg = l.word()
			if seg == "" {
				if first && l.pos < len(l.s) {
					return nil, l.err("expression expected, found %q", string(l.s[l.pos]))
				}
				if first {
					return nil, l.err("expression expected")
				}
				return nil, l.err("path segment expected")
			}
			if first && !e.data && seg == "this" {
				e.this = true
			} else {
				e.segs = append(e.segs, seg)
			}
		}
		first = false
		if l.pos < len(l.s) && (l.s[l.pos] == '.' || l.s[l.pos] == '/') && l.pos+1 < len(l.s) && (isIDChar(l.s[l.pos+1]) || l.s[l.pos+1] == '[') {
			l.pos++
			continue
		}
		if l.pos < len(l.s) && (l.s[l.pos] == '.' || l.s[l.pos] == '/') {
			l.pos++
			return nil, l.err("path segment expected")
		}
		break
	}
	if e.data && len(e.segs) == 0 {
		return nil, l.err("@ must be followed by a name")
	}
	return e, nil
}

// arity is how many positional arguments each helper takes.
var arity = map[string]int{
	"if": 1, "unless": 1, "each": 1, "with": 1, "ifEquals": 2, "unlessEquals": 2,
	"role": 1, "history": 0, "media": 0, "section": 1, "json": 1, "lookup": 2,
}

var roles = []string{"system", "user", "model", "tool"}

// checkArity reports a helper call with the wrong arguments, or "".
func checkArity(c *call, name string) string {
	if n := arity[name]; len(c.params) != n {
		return fmt.Sprintf("%s takes %d argument(s), not %d", name, n, len(c.params))
	}
	switch name {
	case "role":
		if a := c.params[0]; a.kind == eString && !slices.Contains(roles, a.str) {
			return fmt.Sprintf("role must be system, user, model or tool, not %q", a.str)
		}
	case "media":
		for _, h := range c.hash {
			if h.key == "url" {
				return ""
			}
		}
		return "media needs url="
	}
	return ""
}
