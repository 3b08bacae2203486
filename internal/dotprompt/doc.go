// Package dotprompt renders Dotprompt templates
// (github.com/google/dotprompt): Handlebars without HTML escaping, with
// Dotprompt's helpers, rendered to chat messages. It knows nothing of
// stores or HTTP and does no I/O of its own; partials come from a
// caller-supplied PartialResolver.
//
// # Language
//
// Paths a.b (or a/b), this, ../x, @root, @index, @first, @last, @key,
// block parameters ({{#each xs as |x i|}}), segment literals [a b];
// comments {{! }} and {{!-- --}}; {{#if}}/{{else}}/{{else if}},
// {{#unless}}, {{#each}} (lists, and maps in sorted key order),
// {{#with}}, {{^x}} and {{#x}} sections; whitespace control ~ and
// Handlebars' standalone-line rules; \{{ escapes; {{{x}}} and {{&x}}
// (the same as {{x}}: nothing is escaped); subexpressions. Dotprompt's
// helpers: role, history, media, section, json (indent=N), ifEquals,
// unlessEquals (JavaScript's ===: numbers by value, an object or a
// non-empty list equals only itself); and lookup. Partials {{> name}}, {{> name ctx}} and
// {{> name key=value}}, resolved at render time, at most MaxPartialDepth
// deep, cycles refused; errors are *PartialError naming the chain.
// Not supported (a parse error): partial blocks {{#> x}}, inline partials
// {{#*inline}}, dynamic partial names, and helpers other than those named.
// Calling an unknown helper is a parse error, not a render error.
//
// # Rendering
//
// Template.Render gives messages as Dotprompt does: role markers split
// the output into messages with roles system, user, model, tool; output
// before any marker is a user message; {{history}} inserts Data.History
// (marked purpose "history"; without {{history}} the history goes before
// the last user message); {{media url=... contentType=...}} is a media
// part; {{section "x"}} a pending part. Markers are structural, so an
// input value that contains Dotprompt's marker text stays text.
// SplitSource and Body trim a source as Dotprompt does before rendering.
//
// # Bounds
//
// Rendering stops as soon as the output would pass Options.MaxBytes
// (default 4 MiB), inside loops too, without building the rest. A
// marker (role, media, section, history) counts as the text Dotprompt
// writes for it (24 bytes and its arguments), and {{history}} also as
// the history it inserts, so that a loop of markers cannot make messages
// without bound. Every node and loop iteration is a step, and Options.MaxSteps (default 4Mi)
// bounds loops that print nothing. Both return a *LimitError (ErrTooLarge).
// Blocks and subexpressions nest at most MaxNesting (64) deep. A parse
// error is a *ParseError with line and column.
//
// # Variables
//
// Template.Variables lists the top-level input names a template reads:
// the first segments of paths evaluated against the input (outside
// #each/#with bodies and block parameters, through ../ and @root too).
// ReadsAll reports a template that reads the input as a whole ({{json
// this}}). In {{#name}} sections, whose context depends on the value,
// the names read count as top-level too: the list may hold more names
// than are read, never fewer. Partials' own variables are not included: Template.Partials
// names them so that the caller can merge them.
//
// # Why not github.com/google/dotprompt/go
//
// Measured and read before writing this package: that module has no
// tagged release (only pseudo-versions on the module proxy), and renders
// through mbleigh/raymond (a fork of aymerick/raymond), which builds the
// whole output string before a limit could be checked, offers no way to
// list the names a template reads, has no nesting bound, and departs
// from Handlebars where Mustache or Go differ (names looked up in
// enclosing contexts, white space around blocks, empty objects false,
// ifEquals by Go's ==). bench/dotprompt (a module of its own) compares
// the two: on the specification suite's templates, through the public
// API, this package renders 7.6x faster at the geometric mean (every
// template at least 2.3x) with a third of the allocations
// (BENCHMARKS.md); 400 random templates render here as in Dotprompt's
// reference implementation (but for two that meet a Handlebars.js
// quirk), and 108 of them otherwise with the port
// (bench/dotprompt/README.md lists its deviations). The vendored
// specification suite (testdata/spec) passes in full.
//
// A Template is immutable and safe for concurrent use; the package
// starts no goroutines and has no mutable globals.
package dotprompt
