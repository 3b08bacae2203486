package dotprompt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Defaults for Options.
const (
	DefaultMaxBytes = 4 << 20
	DefaultMaxSteps = 4 << 20
	// MaxPartialDepth is how deeply partials may include partials.
	MaxPartialDepth = 16
)

// Errors a render can return; test with errors.Is.
var (
	// ErrTooLarge: the output would pass Options.MaxBytes, or the render
	// would take more than Options.MaxSteps steps. Nothing past the limit
	// is built.
	ErrTooLarge = errors.New("render exceeds the limit")
	// ErrPartial: a partial is unavailable, cyclic, or nested too deeply.
	// The error is a *PartialError naming the chain.
	ErrPartial = errors.New("partial")
	// ErrRender: a helper was given arguments it cannot use.
	ErrRender = errors.New("render")
)

// LimitError says which limit a render passed.
type LimitError struct {
	What  string // "bytes" or "steps"
	Limit int
}

func (e *LimitError) Error() string {
	if e.What == "bytes" {
		return fmt.Sprintf("rendered output would exceed %d bytes", e.Limit)
	}
	return fmt.Sprintf("render would take more than %d steps", e.Limit)
}

func (e *LimitError) Unwrap() error { return ErrTooLarge }

// PartialError is a partial that could not be included. Chain is the
// include chain, outermost first, ending with the partial at fault.
type PartialError struct {
	Chain []string
	Err   error // nil, or what the resolver returned
	Cycle bool
	Depth bool
}

func (e *PartialError) Error() string {
	chain := strings.Join(e.Chain, " > ")
	switch {
	case e.Cycle:
		return "partial cycle: " + chain
	case e.Depth:
		return fmt.Sprintf("partials nest deeper than %d: %s", MaxPartialDepth, chain)
	case e.Err != nil:
		return fmt.Sprintf("partial %s unavailable: %v", chain, e.Err)
	}
	return "partial " + chain + " unavailable"
}

func (e *PartialError) Is(target error) bool { return target == ErrPartial }
func (e *PartialError) Unwrap() error        { return e.Err }

// PartialResolver returns the parsed template of the partial name. It
// may do I/O under ctx; cache parsed templates to parse once per version.
type PartialResolver func(ctx context.Context, name string) (*Template, error)

// PartialMap resolves partials from a map of parsed templates.
func PartialMap(m map[string]*Template) PartialResolver {
	return func(_ context.Context, name string) (*Template, error) {
		if t, ok := m[name]; ok {
			return t, nil
		}
		return nil, fmt.Errorf("no partial named %q", name)
	}
}

// Data is what a template renders with.
type Data struct {
	Input   map[string]any // the variables; values as encoding/json decodes them
	Context map[string]any // @-variables (@state, @auth, ...)
	History []Message      // what {{history}} inserts
}

// Options bound and complete a render. The zero value takes the defaults
// and has no partials.
type Options struct {
	MaxBytes int // output bytes; 0 means DefaultMaxBytes
	MaxSteps int // evaluation steps (nodes and loop iterations); 0 means DefaultMaxSteps
	Partials PartialResolver
}

// seg is a piece of output: text or a marker.
type segKind uint8

const (
	sText segKind = iota
	sRole
	sHistory
	sMedia
	sSection
)

type seg struct {
	kind segKind
	text string // text; role; section name; media url
	ct   string // media content type
	off  int    // text: where it starts in the render's buffer
}

type out struct {
	segs []seg
	// buf is the render's text, one builder for all of it: a segment's
	// text is a slice of it (a builder never changes what it wrote), so
	// the text of the whole render grows one buffer; start is where the
	// pending text begins.
	buf     strings.Builder
	start   int
	size    int
	limit   int
	history int // the size of the history {{history}} inserts
}

// markerSize is about what Dotprompt writes for a marker before it
// splits its output into messages (<<<dotprompt:role:user>>>): each
// marker counts toward the limit as that text does, so that a loop of
// markers cannot make messages without bound.
const markerSize = 24

func (o *out) text(s string) error {
	if s == "" {
		return nil
	}
	if o.size+len(s) > o.limit {
		return &LimitError{What: "bytes", Limit: o.limit}
	}
	o.size += len(s)
	o.buf.WriteString(s)
	return nil
}

func (o *out) marker(m seg) error {
	n := markerSize + len(m.text) + len(m.ct)
	if m.kind == sHistory {
		n += o.history // each {{history}} inserts all of it
	}
	if o.size+n > o.limit || n < 0 {
		return &LimitError{What: "bytes", Limit: o.limit}
	}
	o.size += n
	o.flush()
	o.segs = append(o.segs, m)
	return nil
}

func (o *out) flush() {
	if o.buf.Len() > o.start {
		all := o.buf.String()
		o.segs = append(o.segs, seg{kind: sText, text: all[o.start:], off: o.start})
		o.start = len(all)
	}
}

type scope struct {
	ctx    any
	up     *scope // the enclosing context, for ../
	params map[string]any
	loop   *loopData
	fence  bool // a partial's scope: block parameters outside it are not visible
}

type loopData struct {
	index       int
	key         any
	first, last bool
}

type renderer struct {
	ctx      context.Context
	o        *out
	steps    int
	maxSteps int
	data     Data
	root     any
	partials PartialResolver
	chain    []string // the partials being included, outermost first
	// What most renders need, in the renderer's one allocation: its
	// output, the scope of the input, room for the output's segments
	// and for a chain of partials.
	top      out
	topScope scope
	segs     [8]seg
	chainBuf [4]string
	// The scopes of the partials being included, by depth, for the
	// first few: a partial's scope lives while it renders, and the next
	// partial at its depth takes its place.
	partialScopes [2]scope
}

// Render renders the template with d. It stops as soon as the output
// would pass opts.MaxBytes.
func (t *Template) Render(ctx context.Context, d Data, opts Options) (Result, error) {
	// The renderer is the template's to reuse once the messages are
	// made: what they hold is the output's text, never the renderer.
	r, _ := t.renderers.Get().(*renderer)
	if r == nil {
		r = new(renderer)
	}
	defer func() {
		*r = renderer{} // keeps nothing of this render
		t.renderers.Put(r)
	}()
	segs, all, err := t.render(r, ctx, d, opts)
	if err != nil {
		return Result{}, err
	}
	msgs := toMessages(segs, d.History)
	text, ok := "", false
	if len(d.History) == 0 {
		text, ok = adjacentText(segs, all)
	}
	if !ok {
		text = joinText(msgs)
	}
	return Result{Messages: msgs, Text: text}, nil
}

// render renders with r, a zero renderer, and returns the segments of the
// output and the text they are slices of.
func (t *Template) render(r *renderer, ctx context.Context, d Data, opts Options) ([]seg, string, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	var root any = d.Input
	if d.Input == nil {
		root = map[string]any{}
	}
	// Field by field, r being zero: a whole renderer written at once is
	// made on the stack first, and a render's frames are on the stack of
	// the server's goroutine.
	r.ctx, r.maxSteps, r.data, r.root, r.partials = ctx, opts.MaxSteps, d, root, opts.Partials
	r.top.limit, r.top.history, r.topScope.ctx = opts.MaxBytes, historySize(d.History), root
	r.top.segs, r.chain = r.segs[:0], r.chainBuf[:0]
	r.o = &r.top
	// About the source's size and a quarter, for the values and the
	// partials: most renders then write into one allocation.
	r.o.buf.Grow(min(t.size+t.size/4+64, opts.MaxBytes))
	if err := r.nodes(t.root, &r.topScope); err != nil {
		return nil, "", err
	}
	r.o.flush()
	return r.o.segs, r.o.buf.String(), nil
}

// historySize is the size of the history's text and media references,
// and of a marker per message.
func historySize(h []Message) int {
	n := 0
	for _, m := range h {
		n += markerSize + len(m.Role)
		for _, p := range m.Content {
			n += len(p.Text)
			if p.Media != nil {
				n += len(p.Media.URL) + len(p.Media.ContentType)
			}
		}
	}
	return n
}

func (r *renderer) step() error {
	r.steps++
	if r.steps > r.maxSteps {
		return &LimitError{What: "steps", Limit: r.maxSteps}
	}
	if r.steps&1023 == 0 {
		return r.ctx.Err()
	}
	return nil
}

func (r *renderer) nodes(ns []*node, s *scope) error {
	for _, n := range ns {
		if err := r.step(); err != nil {
			return err
		}
		var err error
		switch n.kind {
		case nText:
			err = r.o.text(n.text)
		case nMustache:
			err = r.mustache(n.call, s)
		case nBlock:
			err = r.block(n, s)
		case nPartial:
			err = r.partial(n, s)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) mustache(c *call, s *scope) error {
	switch c.helper() {
	case "role":
		v, err := r.arg1(c, s, "role")
		if err != nil {
			return err
		}
		role, _ := v.(string)
		switch role {
		case "system", "user", "model", "tool":
		default:
			return fmt.Errorf("%w: role must be system, user, model or tool, not %q", ErrRender, toString(v))
		}
		return r.o.marker(seg{kind: sRole, text: role})
	case "history":
		return r.o.marker(seg{kind: sHistory})
	case "section":
		v, err := r.arg1(c, s, "section")
		if err != nil {
			return err
		}
		return r.o.marker(seg{kind: sSection, text: toString(v)})
	case "media":
		h, err := r.hash(c, s)
		if err != nil {
			return err
		}
		u := toString(h["url"])
		if u == "" {
			return fmt.Errorf("%w: media needs url=", ErrRender)
		}
		return r.o.marker(seg{kind: sMedia, text: u, ct: toString(h["contentType"])})
	}
	var v any
	var err error
	if c.helper() == "" {
		v, err = r.eval(c.head, s)
	} else {
		v, err = r.helperValue(c, s)
	}
	if err != nil {
		return err
	}
	return r.o.text(toString(v))
}

func (r *renderer) arg1(c *call, s *scope, name string) (any, error) {
	if len(c.params) != 1 {
		return nil, fmt.Errorf("%w: %s takes one argument", ErrRender, name)
	}
	return r.eval(c.params[0], s)
}

func (r *renderer) hash(c *call, s *scope) (map[string]any, error) {
	h := make(map[string]any, len(c.hash))
	for _, p := range c.hash {
		v, err := r.eval(p.val, s)
		if err != nil {
			return nil, err
		}
		h[p.key] = v
	}
	return h, nil
}

func (r *renderer) block(n *node, s *scope) error {
	c := n.call
	name := c.helper()
	args := make([]any, len(c.params))
	for i, p := range c.params {
		v, err := r.eval(p, s)
		if err != nil {
			return err
		}
		args[i] = v
	}
	cond := func(b bool) error {
		if b != n.inverted {
			return r.nodes(n.body, s)
		}
		return r.nodes(n.inv, s)
	}
	switch name {
	case "if", "unless":
		if len(args) != 1 {
			return fmt.Errorf("%w: #%s takes one argument", ErrRender, name)
		}
		return cond(truthy(args[0]) == (name == "if"))
	case "ifEquals", "unlessEquals":
		if len(args) != 2 {
			return fmt.Errorf("%w: #%s takes two arguments", ErrRender, name)
		}
		return cond(equal(args[0], args[1]) == (name == "ifEquals"))
	case "with":
		if len(args) != 1 {
			return fmt.Errorf("%w: #with takes one argument", ErrRender)
		}
		if !truthy(args[0]) {
			return r.nodes(n.inv, s)
		}
		return r.nodes(n.body, r.child(s, args[0], n.blockParams, args[0], nil, nil))
	case "each":
		if len(args) != 1 {
			return fmt.Errorf("%w: #each takes one argument", ErrRender)
		}
		return r.each(n, s, args[0])
	}
	// {{#name}}: Handlebars' blockHelperMissing.
	v, err := r.eval(c.head, s)
	if err != nil {
		return err
	}
	if n.inverted {
		if !truthy(v) {
			return r.nodes(n.body, s)
		}
		return r.nodes(n.inv, s)
	}
	switch v.(type) {
	case bool:
		return cond(v == true)
	}
	if isList(v) {
		if !truthy(v) {
			return r.nodes(n.inv, s)
		}
		return r.each(n, s, v)
	}
	if !truthy(v) {
		return r.nodes(n.inv, s)
	}
	return r.nodes(n.body, r.child(s, v, nil, nil, nil, nil))
}

func (r *renderer) child(s *scope, ctx any, names []string, v0, v1 any, loop *loopData) *scope {
	c := &scope{ctx: ctx, up: s, loop: loop}
	if loop == nil {
		c.loop = s.loop
	}
	if len(names) > 0 {
		c.params = map[string]any{names[0]: v0}
		if len(names) > 1 {
			c.params[names[1]] = v1
		}
	}
	return c
}

func (r *renderer) each(n *node, s *scope, v any) error {
	rendered := false
	switch {
	case isList(v):
		rv := reflect.ValueOf(v)
		l := rv.Len()
		for i := 0; i < l; i++ {
			if err := r.step(); err != nil {
				return err
			}
			item := rv.Index(i).Interface()
			ld := &loopData{index: i, key: i, first: i == 0, last: i == l-1}
			if err := r.nodes(n.body, r.child(s, item, n.blockParams, item, i, ld)); err != nil {
				return err
			}
			rendered = true
		}
	case isMap(v):
		rv := reflect.ValueOf(v)
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		for i, k := range keys {
			if err := r.step(); err != nil {
				return err
			}
			item := rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())).Interface()
			ld := &loopData{index: i, key: k, first: i == 0, last: i == len(keys)-1}
			if err := r.nodes(n.body, r.child(s, item, n.blockParams, item, k, ld)); err != nil {
				return err
			}
			rendered = true
		}
	}
	if !rendered {
		return r.nodes(n.inv, s)
	}
	return nil
}

func (r *renderer) partial(n *node, s *scope) error {
	// The chain grows in place, and shrinks back once the partial is
	// rendered; an error keeps a copy of it.
	chain := append(r.chain, n.name)
	for _, c := range r.chain {
		if c == n.name {
			return &PartialError{Chain: slices.Clone(chain), Cycle: true}
		}
	}
	if len(chain) > MaxPartialDepth {
		return &PartialError{Chain: slices.Clone(chain), Depth: true}
	}
	if r.partials == nil {
		return &PartialError{Chain: slices.Clone(chain)}
	}
	t, err := r.partials(r.ctx, n.name)
	if err != nil || t == nil {
		return &PartialError{Chain: slices.Clone(chain), Err: err}
	}
	ctx := s.ctx
	if n.ctxArg != nil {
		if ctx, err = r.eval(n.ctxArg, s); err != nil {
			return err
		}
	}
	if n.call != nil {
		h, err := r.hash(n.call, s)
		if err != nil {
			return err
		}
		m := map[string]any{}
		if base, ok := ctx.(map[string]any); ok {
			for k, v := range base {
				m[k] = v
			}
		}
		for k, v := range h {
			m[k] = v
		}
		ctx = m
	}
	saved := r.chain
	r.chain = chain
	defer func() { r.chain = saved }()
	var ps *scope
	if d := len(saved); d < len(r.partialScopes) {
		ps = &r.partialScopes[d]
		*ps = scope{ctx: ctx, up: s, loop: s.loop, fence: true}
	} else {
		ps = &scope{ctx: ctx, up: s, loop: s.loop, fence: true}
	}
	if n.indent == "" {
		return r.nodes(t.root, ps)
	}
	return r.indented(t, ps, n.indent)
}

// indented renders a standalone partial, t in the scope ps, aside, then
// indents each of its lines with indent. (Apart from partial, whose frame
// is on the stack of every render that includes a partial.)
func (r *renderer) indented(t *Template, ps *scope, indent string) error {
	outer := r.o
	r.o = &out{limit: outer.limit - outer.size}
	err := r.nodes(t.root, ps)
	inner := r.o
	r.o = outer
	if err != nil {
		return err
	}
	inner.flush()
	atLineStart := true
	for _, sg := range inner.segs {
		if sg.kind != sText {
			atLineStart = false
			if err := r.o.marker(sg); err != nil {
				return err
			}
			continue
		}
		lines := strings.SplitAfter(sg.text, "\n")
		for _, ln := range lines {
			if ln == "" {
				continue
			}
			if atLineStart {
				if err := r.o.text(indent); err != nil {
					return err
				}
			}
			if err := r.o.text(ln); err != nil {
				return err
			}
			atLineStart = strings.HasSuffix(ln, "\n")
		}
	}
	return nil
}

func (r *renderer) eval(e *expr, s *scope) (any, error) {
	switch e.kind {
	case eString, eNumber:
		return e.lit, nil
	case eBool:
		return e.b, nil
	case eNull:
		return nil, nil
	case eSub:
		return r.helperValue(e.sub, s)
	}
	if e.data {
		var v any
		segs := e.segs
		switch segs[0] {
		case "root":
			v = r.root
		case "index", "key", "first", "last":
			if s.loop == nil {
				return nil, nil
			}
			switch segs[0] {
			case "index":
				v = s.loop.index
			case "key":
				v = s.loop.key
			case "first":
				v = s.loop.first
			case "last":
				v = s.loop.last
			}
		default:
			v = r.data.Context[segs[0]]
		}
		return lookup(v, segs[1:]), nil
	}
	cur := s
	for i := 0; i < e.parents && cur.up != nil; i++ {
		cur = cur.up
	}
	if e.parents == 0 && !e.this && len(e.segs) > 0 {
		for b := s; b != nil && !b.fence; b = b.up {
			if v, ok := b.params[e.segs[0]]; ok {
				return lookup(v, e.segs[1:]), nil
			}
		}
	}
	return lookup(cur.ctx, e.segs), nil
}

// helperValue evaluates a helper used for its value, as a mustache or a
// subexpression.
func (r *renderer) helperValue(c *call, s *scope) (any, error) {
	name := c.helper()
	args := make([]any, len(c.params))
	for i, p := range c.params {
		v, err := r.eval(p, s)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	switch name {
	case "json":
		if len(args) != 1 {
			return nil, fmt.Errorf("%w: json takes one argument", ErrRender)
		}
		h, err := r.hash(c, s)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if ind, ok := toNumber(h["indent"]); ok && ind > 0 {
			enc.SetIndent("", strings.Repeat(" ", int(math.Min(ind, 10))))
		}
		if err := enc.Encode(args[0]); err != nil {
			return nil, fmt.Errorf("%w: json: %v", ErrRender, err)
		}
		return strings.TrimSuffix(b.String(), "\n"), nil
	case "lookup":
		if len(args) != 2 {
			return nil, fmt.Errorf("%w: lookup takes two arguments", ErrRender)
		}
		return lookup(args[0], []string{toString(args[1])}), nil
	case "if", "unless", "ifEquals", "unlessEquals":
		var b bool
		if name == "if" || name == "unless" {
			if len(args) != 1 {
				return nil, fmt.Errorf("%w: %s takes one argument", ErrRender, name)
			}
			b = truthy(args[0]) == (name == "if")
		} else {
			if len(args) != 2 {
				return nil, fmt.Errorf("%w: %s takes two arguments", ErrRender, name)
			}
			b = equal(args[0], args[1]) == (name == "ifEquals")
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w: %s cannot be used as a value", ErrRender, name)
}

func lookup(v any, segs []string) any {
	for _, sgm := range segs {
		switch m := v.(type) {
		case map[string]any:
			v = m[sgm]
			continue
		case []any:
			i, err := strconv.Atoi(sgm)
			if err != nil || i < 0 || i >= len(m) {
				if sgm == "length" {
					v = len(m)
					continue
				}
				return nil
			}
			v = m[i]
			continue
		case nil:
			return nil
		}
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Map:
			if rv.Type().Key().Kind() != reflect.String {
				return nil
			}
			x := rv.MapIndex(reflect.ValueOf(sgm).Convert(rv.Type().Key()))
			if !x.IsValid() {
				return nil
			}
			v = x.Interface()
		case reflect.Slice, reflect.Array:
			i, err := strconv.Atoi(sgm)
			if err != nil || i < 0 || i >= rv.Len() {
				if sgm == "length" {
					v = rv.Len()
					continue
				}
				return nil
			}
			v = rv.Index(i).Interface()
		case reflect.String:
			if sgm == "length" {
				v = len([]rune(rv.String()))
				continue
			}
			return nil
		default:
			return nil
		}
	}
	return v
}

func isList(v any) bool {
	if v == nil {
		return false
	}
	if _, ok := v.([]any); ok {
		return true
	}
	k := reflect.TypeOf(v).Kind()
	return k == reflect.Slice || k == reflect.Array
}

func isMap(v any) bool {
	if v == nil {
		return false
	}
	if _, ok := v.(map[string]any); ok {
		return true
	}
	t := reflect.TypeOf(v)
	return t.Kind() == reflect.Map && t.Key().Kind() == reflect.String
}

// truthy is Handlebars' truthiness: false, null, "", 0 and empty lists are false.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	}
	if f, ok := toNumber(v); ok {
		return f != 0 && !math.IsNaN(f)
	}
	if isList(v) {
		return reflect.ValueOf(v).Len() > 0
	}
	return true
}

func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// equal is JavaScript's === on JSON values: an object or a list equals
// only itself (the same value reached by two paths, as {{#with obj}}
// this and @root.obj).
func equal(a, b any) bool {
	if fa, ok := toNumber(a); ok {
		fb, ok := toNumber(b)
		return ok && fa == fb
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return sameObject(a, b)
}

// sameObject reports whether a and b are the same map, or the same
// non-empty list (empty lists may share their address: they count as
// different, as two [] do in JavaScript).
func sameObject(a, b any) bool {
	if a == nil || b == nil {
		return false
	}
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if ra.Type() != rb.Type() {
		return false
	}
	switch ra.Kind() {
	case reflect.Map:
		return ra.UnsafePointer() == rb.UnsafePointer()
	case reflect.Slice:
		return ra.Len() > 0 && ra.Len() == rb.Len() && ra.UnsafePointer() == rb.UnsafePointer()
	}
	return false
}

// toString renders a value as JavaScript would concatenate it.
func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	if f, ok := toNumber(v); ok {
		if f == math.Trunc(f) && math.Abs(f) < 1e21 {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if isList(v) {
		rv := reflect.ValueOf(v)
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = toString(rv.Index(i).Interface())
		}
		return strings.Join(parts, ",")
	}
	if isMap(v) {
		return "[object Object]"
	}
	return fmt.Sprint(v)
}
