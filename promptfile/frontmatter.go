package promptfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"go.yaml.in/yaml/v3"

	"github.com/promptkit/prompts"
)

// The front matter is YAML; metadata is JSON. Reading, the YAML of
// metadata becomes JSON text, each number as written (converted only
// from forms JSON lacks: 0x1F, +1, .5); writing, the JSON becomes YAML
// with each number's text kept (tagged where YAML would read it another
// way, as !!float 1e400).

// The front matter's fields.
const (
	fieldName        = "name"
	fieldDescription = "description"
	fieldMetadata    = "metadata"
	// fieldFormat names the format of a file: plain marks a plain
	// version; without it (or with dotprompt) the file is Dotprompt's.
	fieldFormat = "prompts.format"
	// nsPrefix is this project's namespace of front matter keys.
	nsPrefix = "prompts."
)

// parseFrontMatter reads the YAML text of a front matter whose opening
// delimiter is on line opening of the file.
func parseFrontMatter(text string, opening int) (f File, at lines, err error) {
	defer func() {
		if r := recover(); r != nil { // the YAML library's own failure
			err = errorf(opening, "the front matter cannot be read as YAML")
		}
	}()
	f.Format = prompts.FormatDotprompt
	// The library counts a lone carriage return as a line break too:
	// a line it names is kept within the front matter.
	last := opening + strings.Count(text, "\n")
	line := func(n *yaml.Node) int { return max(opening+1, min(n.Line+opening, last)) }
	if err := checkYAMLText(text, opening+1); err != nil {
		return f, at, err
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return f, at, nil // nothing but white space and comments
		}
		return f, at, yamlError(err, text, opening)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return f, at, yamlError(err, text, opening)
	default:
		return f, at, errorf(line(&extra), "the front matter must be one YAML document")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return f, at, nil
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return f, at, nil
	}
	if root.Kind != yaml.MappingNode {
		return f, at, errorf(line(root), "the front matter must be a YAML mapping")
	}
	// The keys first: their names, and the format they make the file.
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		name, null, ok := scalarText(k)
		if !ok || null || k.ShortTag() == "!!merge" {
			return f, at, errorf(line(k), "the front matter's keys must be names (YAML merge keys and aliases are not read)")
		}
		if seen[name] {
			return f, at, errorf(line(k), "%s is given twice", name)
		}
		seen[name] = true
		if !strings.HasPrefix(name, nsPrefix) {
			continue
		}
		if name != fieldFormat {
			return f, at, errorf(line(k), "unknown key %q: the namespace prompts. holds prompts.format only", name)
		}
		s, _, _ := scalarText(v)
		switch prompts.TemplateFormat(s) {
		case prompts.FormatPlain:
			f.Format = prompts.FormatPlain
		case prompts.FormatDotprompt:
		default:
			return f, at, errorf(line(v), "prompts.format must be plain or dotprompt (without it, the file is a Dotprompt file)")
		}
	}
	var meta []byte // a dotprompt file's metadata_, as it is built
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case fieldName:
			s, null, ok := scalarText(v)
			switch {
			case !ok || null:
				return f, at, errorf(line(v), "name must be a string")
			case s == "":
				return f, at, errorf(line(v), "name must not be empty (leave it out, and the name is the key)")
			}
			f.Name, at.name = s, line(v)
			continue
		case fieldDescription:
			s, null, ok := scalarText(v)
			if !ok {
				return f, at, errorf(line(v), "description must be a string or null")
			}
			if !null {
				f.Description = &s
			}
			at.description = line(v)
			continue
		}
		c := converter{line: line}
		if f.Format == prompts.FormatDotprompt {
			// Every other key is the version's: metadata_ is the rest of
			// the front matter.
			if meta == nil {
				meta, at.metadata, at.keys = []byte{'{'}, line(k), map[string]int{}
			} else {
				meta = append(meta, ',')
			}
			at.keys[k.Value] = line(k)
			meta = appendQuote(meta, k.Value)
			meta = append(meta, ':')
			if meta, err = c.json(meta, v, 2); err != nil {
				return f, at, err
			}
			continue
		}
		switch k.Value {
		case fieldFormat:
		case fieldMetadata:
			at.metadata = line(v)
			if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
				continue
			}
			if v.Kind != yaml.MappingNode {
				return f, at, errorf(line(v), "metadata must be a mapping (it becomes a JSON object) or null")
			}
			b, err := c.json(nil, v, 1)
			if err != nil {
				return f, at, err
			}
			f.Metadata = prompts.Metadata(b)
		default:
			return f, at, errorf(line(k), "unknown field %q: the front matter of a plain prompt (prompts.format: plain) holds name, description and metadata; put anything else under metadata", k.Value)
		}
	}
	if meta != nil {
		f.Metadata = prompts.Metadata(append(meta, '}'))
	}
	return f, at, nil
}

// yamlLineRe finds the line in the YAML library's error messages.
var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the YAML library's errors that it reports with a
// line counted from 0 (its scanner's count from 1); without a line, the
// problem is on the first.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlError is a YAML syntax error of text at its line of the file (near
// it: the library names the line where what it could not read started).
func yamlError(err error, text string, opening int) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	n := 1
	if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
		msg = m[2]
		if k, err := strconv.Atoi(m[1]); err == nil {
			n = k
			if parserProblems[msg] {
				n++
			}
		}
	}
	n = max(1, min(n, strings.Count(strings.TrimSuffix(text, "\n"), "\n")+1))
	return errorf(n+opening, "the front matter is not valid YAML: %s", msg)
}

// checkYAMLText refuses the characters YAML does not allow, at their
// line (text starts on line first): the library would name none.
func checkYAMLText(text string, first int) error {
	line := first
	for _, r := range text {
		switch {
		case r == '\n':
			line++
		case r == '\t' || r == '\r' || r == 0x85:
		case r < 0x20, r >= 0x7f && r < 0xa0, r == 0xfffe, r == 0xffff:
			return errorf(line, "the front matter holds the control character %U, which YAML does not allow", r)
		}
	}
	return nil
}

// scalarText returns the text of a scalar that can be a string (a string,
// or a number, boolean or date as written), or whether it is null; ok is
// false for anything else.
func scalarText(n *yaml.Node) (s string, null, ok bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false, false
	}
	switch n.ShortTag() {
	case "!!null":
		return "", true, true
	case "!!str", "!!int", "!!float", "!!bool", "!!timestamp":
		return n.Value, false, true
	}
	return "", false, false
}

// converter turns the YAML of metadata into JSON.
type converter struct {
	line func(*yaml.Node) int
}

func (c *converter) json(b []byte, n *yaml.Node, depth int) ([]byte, error) {
	if depth > prompts.MaxMetadataDepth && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) {
		return nil, errorf(c.line(n), "metadata must nest at most %d levels", prompts.MaxMetadataDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return nil, errorf(c.line(n), "metadata cannot use YAML aliases (*%s): write the value out", n.Value)
	case yaml.MappingNode:
		b = append(b, '{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.ShortTag() == "!!merge" {
				return nil, errorf(c.line(k), "metadata cannot use YAML merge keys (<<): write the values out")
			}
			name, null, ok := scalarText(k)
			if !ok || null {
				return nil, errorf(c.line(k), "metadata's keys must be strings")
			}
			if seen[name] {
				return nil, errorf(c.line(k), "metadata has the key %q twice in one mapping", name)
			}
			seen[name] = true
			if i > 0 {
				b = append(b, ',')
			}
			b = appendQuote(b, name)
			b = append(b, ':')
			var err error
			if b, err = c.json(b, v, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case yaml.SequenceNode:
		b = append(b, '[')
		for i, v := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = c.json(b, v, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!null":
			return append(b, "null"...), nil
		case "!!bool":
			return strconv.AppendBool(b, strings.EqualFold(n.Value, "true")), nil
		case "!!int", "!!float":
			num, ok := jsonNumber(n.Value, tag == "!!int")
			if !ok {
				return nil, errorf(c.line(n), "metadata: %s is not a number JSON can hold", n.Value)
			}
			return append(b, num...), nil
		case "!!str", "!!timestamp":
			return appendQuote(b, n.Value), nil
		default:
			return nil, errorf(c.line(n), "metadata cannot hold a value tagged %s", tag)
		}
	}
	return nil, errorf(c.line(n), "metadata holds something that is not a value")
}

// jsonNumberRe is the JSON grammar of a number.
var jsonNumberRe = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// jsonNumber returns the JSON text of a YAML number: itself when it is
// JSON already, else converted (0x1F is 31, +.5 is 0.5); ok is false for
// what JSON cannot hold (.inf, .nan).
func jsonNumber(v string, isInt bool) (string, bool) {
	if jsonNumberRe.MatchString(v) {
		return v, true
	}
	t := strings.TrimPrefix(strings.ReplaceAll(v, "_", ""), "+")
	if isInt {
		// YAML 1.2: 0x1F, 0o17 and 0b101 name their base; 017 is 17.
		base, digits := 10, strings.TrimPrefix(t, "-")
		if len(digits) > 1 && digits[0] == '0' && strings.ContainsRune("xXoObB", rune(digits[1])) {
			base = 0
		}
		var z big.Int
		if _, ok := z.SetString(t, base); ok {
			return z.String(), true
		}
		return "", false
	}
	sign := ""
	if rest, ok := strings.CutPrefix(t, "-"); ok {
		sign, t = "-", rest
	}
	mant, exp := t, ""
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		mant, exp = t[:i], t[i:]
	}
	whole, frac, dot := strings.Cut(mant, ".")
	if whole = strings.TrimLeft(whole, "0"); whole == "" {
		whole = "0"
	}
	if dot && frac == "" {
		frac = "0"
	}
	n := sign + whole
	if frac != "" {
		n += "." + frac
	}
	n += exp
	if jsonNumberRe.MatchString(n) {
		return n, true
	}
	return "", false
}

// formatFrontMatter writes the YAML of f's front matter: nothing when it
// has no field.
func formatFrontMatter(f File) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) {
		root.Content = append(root.Content, str(k), v)
	}
	if f.Name != "" {
		add(fieldName, str(f.Name))
	}
	if f.Description != nil {
		add(fieldDescription, str(*f.Description))
	}
	var meta *yaml.Node
	if !f.Metadata.IsNull() {
		dec := json.NewDecoder(strings.NewReader(string(f.Metadata)))
		dec.UseNumber()
		n, err := jsonNode(dec)
		if err != nil {
			return nil, fmt.Errorf("promptfile: metadata: %w", err)
		}
		if n.Kind != yaml.MappingNode {
			return nil, errors.New("promptfile: metadata must be a JSON object")
		}
		meta = n
	}
	format := f.Format.Or(prompts.FormatPlain)
	switch {
	case format == prompts.FormatDotprompt && meta != nil:
		for i := 0; i+1 < len(meta.Content); i += 2 {
			k, v := meta.Content[i].Value, meta.Content[i+1]
			switch {
			case k == fieldName || k == fieldDescription:
				return nil, fmt.Errorf("promptfile: metadata has the key %q, which a Dotprompt front matter keeps for the prompt's %s", k, k)
			case k == fieldFormat && !(v.Kind == yaml.ScalarNode && v.Value == string(prompts.FormatDotprompt)):
				return nil, fmt.Errorf("promptfile: metadata has the key %s, which must then be dotprompt", fieldFormat)
			case k != fieldFormat && strings.HasPrefix(k, nsPrefix):
				return nil, fmt.Errorf("promptfile: metadata has the key %q, in the namespace prompts., which holds prompts.format only", k)
			}
			add(k, v)
		}
	case format == prompts.FormatPlain:
		add(fieldFormat, str(string(prompts.FormatPlain)))
		if meta != nil {
			add(fieldMetadata, meta)
		}
	case format != prompts.FormatDotprompt:
		return nil, fmt.Errorf("promptfile: the format %q is not plain or dotprompt", f.Format)
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	b, err := encode(root)
	if err != nil {
		return nil, err
	}
	// The YAML library writes a few strings in a form it cannot read back
	// (a block scalar whose line starts with a tab): then every string is
	// written double-quoted, a form that holds anything.
	if back, _, err := parseFrontMatter(string(b), 1); err == nil && back.Name == f.Name && back.Format == format &&
		equalDescription(back.Description, f.Description) && sameFrontMatterMetadata(back.Metadata, f.Metadata, format) {
		return b, nil
	}
	quote(root)
	if b, err = encode(root); err != nil {
		return nil, err
	}
	if _, _, err := parseFrontMatter(string(b), 1); err != nil {
		return nil, fmt.Errorf("promptfile: the front matter written cannot be read back: %w", err)
	}
	return b, nil
}

func encode(root *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("promptfile: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("promptfile: %w", err)
	}
	return b.Bytes(), nil
}

// quote makes every string under n double-quoted.
func quote(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		quote(c)
	}
}

// sameFrontMatterMetadata is SameMetadata, where a dotprompt file's
// empty object is no metadata (both are an empty front matter).
func sameFrontMatterMetadata(a, b prompts.Metadata, format prompts.TemplateFormat) bool {
	if format == prompts.FormatDotprompt {
		a, b = emptyIsNull(a), emptyIsNull(b)
	}
	return SameMetadata(a, b)
}

func emptyIsNull(m prompts.Metadata) prompts.Metadata {
	if v, err := decodeJSON(string(m)); err == nil {
		if o, ok := v.(map[string]any); ok && len(o) == 0 {
			return ""
		}
	}
	return m
}

func equalDescription(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// SameMetadata reports whether two metadata are the same JSON value:
// null and null, or objects with the same names (in any order) and the
// same values, strings compared after their escapes are read, numbers
// by their value (1, 1.0 and 10e-1 are the same number; 1e400 keeps its
// every digit).
func SameMetadata(a, b prompts.Metadata) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() == b.IsNull()
	}
	va, err := decodeJSON(string(a))
	if err != nil {
		return false
	}
	vb, err := decodeJSON(string(b))
	if err != nil {
		return false
	}
	return sameValue(va, vb)
}

func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func sameValue(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !sameValue(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		return ok && canonicalNumber(string(a)) == canonicalNumber(string(b))
	default: // string, bool, nil
		return a == b
	}
}

// canonicalNumber returns one text for every way of writing a JSON
// number's value: its sign, its significant digits without leading or
// trailing zeros, and the exponent of the last of them ("1.50" and
// "15e-1" are both "+15e-1"; every zero is "0"). It computes nothing
// that grows with the exponent, so 1e999999999 costs what 1e9 does.
func canonicalNumber(s string) string {
	sign := "+"
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		sign, s = "-", rest
	}
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.ParseInt(strings.TrimPrefix(s[i+1:], "+"), 10, 64)
		if err != nil || e > 1<<62 || e < -1<<62 {
			return sign + s // beyond what is worth counting: compared as written
		}
		exp = e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	exp -= int64(len(frac))
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	trimmed = strings.TrimLeft(trimmed, "0")
	if trimmed == "" {
		return "0"
	}
	return sign + trimmed + "e" + strconv.FormatInt(exp, 10)
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// jsonNode reads one JSON value from dec as a YAML node.
func jsonNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		if t == '{' {
			n.Kind = yaml.MappingNode
		}
		for dec.More() {
			if n.Kind == yaml.MappingNode {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, str(k.(string)))
			}
			v, err := jsonNode(dec)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return str(t), nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t)}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}

// appendQuote appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendQuote(b []byte, s string) []byte {
	b, _ = jsontext.AppendQuote(b, s)
	return b
}
