package dotprompt

import "sort"

// TextPart is a piece of a template made by Text: literal text, or, when
// Var is not empty, the value of the top-level input name Var.
type TextPart struct {
	Text string
	Var  string
}

// Text returns the template that renders parts in order: each text as it
// is, each variable as {{this.NAME}} would (so that a name like "role" is
// read as a value, never as a helper). It lets a template written in
// another language, whose only tags are variables, be included as a
// partial.
func Text(parts []TextPart) *Template {
	t := &Template{}
	seen := map[string]bool{}
	for _, p := range parts {
		if p.Var == "" {
			t.root = append(t.root, &node{kind: nText, text: p.Text})
			continue
		}
		t.root = append(t.root, &node{kind: nMustache, call: newCall(&expr{kind: ePath, this: true, segs: []string{p.Var}})})
		if !seen[p.Var] {
			seen[p.Var] = true
			t.vars = append(t.vars, p.Var)
		}
	}
	sort.Strings(t.vars)
	return t
}
