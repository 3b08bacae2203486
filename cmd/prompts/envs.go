package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// runEnv is "prompts env": list the project's environments, add one or
// set its protection (put NAME [-protected]), remove one (rm NAME).
// Adding, protecting and removing need an admin key.
func runEnv(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "env", true)
	f.arg = "the environment's NAME"
	protected := f.Bool("protected", false, "put: changing what the environment points at needs an admin key (without it, put makes it unprotected)")
	f.jsonFlag()
	pos, code, ok := f.parseAny(args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		return f.bad("say what to do: list, put NAME or rm NAME")
	}
	sub := pos[0]
	n, known := map[string]int{"list": 0, "put": 1, "rm": 1}[sub]
	if !known {
		return f.bad("unknown action %q: list, put NAME or rm NAME", sub)
	}
	if pos, code, ok = f.count(pos[1:], n); !ok {
		return code
	}
	var name prompts.Environment
	if n == 1 {
		var err error
		if name, err = environment(pos[0]); err != nil {
			return f.bad("%v", err)
		}
	}
	if *protected && sub != "put" {
		return f.bad("-protected is for put")
	}
	cl, project, err := f.connect(ctx)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	switch sub {
	case "put":
		pe, err := cl.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: project.ID, Name: name, Protected: *protected})
		if err != nil {
			return e.errorf("%s", describe(err))
		}
		if f.json {
			writeJSON(e.stdout, api.FromEnvironment(pe))
			return exitOK
		}
		state := "unprotected"
		if pe.Protected {
			state = "protected: changing what it points at needs an admin key"
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", pe.Name, state)
	case "rm":
		if err := cl.DeleteEnvironment(ctx, project.ID, name); err != nil {
			return e.errorf("%s", describe(err))
		}
		if !f.json {
			fmt.Fprintf(e.stdout, "%s removed\n", name)
		}
	default:
		l, err := cl.ListEnvironments(ctx, project.ID)
		if err != nil {
			return e.errorf("%s", describe(err))
		}
		if f.json {
			out := make([]api.Environment, len(l))
			for i, pe := range l {
				out[i] = api.FromEnvironment(pe)
			}
			writeJSON(e.stdout, out)
			return exitOK
		}
		tw := newTable(e.stdout)
		row(tw, "NAME", "PROTECTED", "CREATED (UTC)")
		for _, pe := range l {
			p := "no"
			if pe.Protected {
				p = "yes"
			}
			row(tw, string(pe.Name), p, pe.CreatedAt.UTC().Format("2006-01-02 15:04:05"))
		}
		tw.Flush()
	}
	return exitOK
}

// joinEnvironments lists names for people: "production, staging, canary".
func joinEnvironments(names []prompts.Environment) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
