package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/client"
)

// runKeys manages the server's API keys: keys create, keys list, keys
// revoke. Every one needs an admin key.
func runKeys(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "create":
			return runKeysCreate(ctx, e, args[1:])
		case "list":
			return runKeysList(ctx, e, args[1:])
		case "revoke":
			return runKeysRevoke(ctx, e, args[1:])
		}
	}
	f := newFlags(e, "keys", false)
	if _, code, ok := f.parse(args, -1); !ok { // -h, a bad flag
		return code
	}
	return f.bad("want create, list or revoke")
}

// runKeysCreate is keys create NAME -role ROLE [-projects SLUG,…]
// [-expires DURATION]: it prints the new key's secret, the only time the
// server shows it.
func runKeysCreate(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "keys", false)
	f.arg = "the new key's NAME"
	role := f.String("role", "", "the key's role: read, write, deploy or admin (required)")
	projects := f.String("projects", "", "the projects the key may see, by slug or id, comma-separated (default: every project this key may see)")
	expires := f.Duration("expires", 0, "how long the key works, such as 720h (default: until revoked)")
	f.jsonFlag()
	pos, code, ok := f.parse(args, 1)
	if !ok {
		return code
	}
	r := prompts.KeyRole(*role)
	if !r.Valid() {
		return f.bad("-role must be read, write, deploy or admin")
	}
	if *expires < 0 {
		return f.bad("-expires must be positive")
	}
	cl, err := f.client()
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	in := prompts.NewAPIKey{Name: pos[0], Role: r, Creator: prompts.Grant{Role: prompts.KeyAdmin}} // the server checks this key's own grant
	if *projects != "" {
		if in.ProjectIDs, err = projectIDs(ctx, cl, strings.Split(*projects, ",")); err != nil {
			return e.errorf("%s", describe(err))
		}
	}
	if *expires > 0 {
		at := time.Now().Add(*expires)
		in.ExpiresAt = &at
	}
	k, secret, err := cl.CreateKey(ctx, in)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	if f.json {
		writeJSON(e.stdout, api.FromNewAPIKey(k, secret))
		return exitOK
	}
	fmt.Fprintf(e.stdout, "Created key %s (%s), role %s, %s.\n", sanitize(k.Name), k.ID, k.Role, describeProjects(k.ProjectIDs))
	fmt.Fprintf(e.stdout, "Secret (shown once, keep it now): %s\n", sanitize(secret))
	return exitOK
}

// runKeysList lists the keys: the server's configuration's, then its
// store's.
func runKeysList(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "keys", false)
	f.jsonFlag()
	if _, code, ok := f.parse(args, 0); !ok {
		return code
	}
	cl, err := f.client()
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	keys, err := allKeys(ctx, cl)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	if f.json {
		writeJSON(e.stdout, keys)
		return exitOK
	}
	tw := newTable(e.stdout)
	row(tw, "NAME", "ROLE", "PROJECTS", "SOURCE", "EXPIRES (UTC)", "LAST USED (UTC)", "ID")
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04")
	}
	for _, k := range keys {
		id := "-"
		if k.ID != nil {
			id = *k.ID
		}
		projects := "all"
		if k.ProjectIDs != nil {
			projects = strings.Join(k.ProjectIDs, ",")
		}
		row(tw, sanitize(k.Name), sanitize(k.Role), sanitize(projects), sanitize(k.Source), when(k.ExpiresAt), when(k.LastUsedAt), sanitize(id))
	}
	tw.Flush()
	return exitOK
}

// runKeysRevoke is keys revoke ID|NAME.
func runKeysRevoke(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "keys", false)
	f.arg = "the key's ID or NAME"
	pos, code, ok := f.parse(args, 1)
	if !ok {
		return code
	}
	cl, err := f.client()
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	keys, err := allKeys(ctx, cl)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	var found *api.Key
	for i, k := range keys {
		if (k.ID != nil && *k.ID == pos[0]) || k.Name == pos[0] {
			found = &keys[i]
		}
	}
	switch {
	case found == nil:
		return e.errorf("no key %s (by id or name) among those this key may see", pos[0])
	case found.ID == nil:
		return e.errorf("key %s is of the server's configuration (-key, -keys, -api-key): remove it there", found.Name)
	}
	if _, err := cl.RevokeKey(ctx, prompts.KeyRevocation{ID: *found.ID, Revoker: prompts.Grant{Role: prompts.KeyAdmin}}); err != nil {
		return e.errorf("%s", describe(err))
	}
	fmt.Fprintf(e.stdout, "Revoked key %s (%s).\n", sanitize(found.Name), *found.ID)
	return exitOK
}

// allKeys reads every page of GET /keys.
func allKeys(ctx context.Context, cl *client.Client) ([]api.Key, error) {
	out := []api.Key{}
	p := prompts.Page{Limit: prompts.MaxLimit}
	for {
		page, more, err := cl.ListAPIKeys(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if !more || len(page) == 0 || page[len(page)-1].ID == nil {
			return out, nil
		}
		p.After = *page[len(page)-1].ID
	}
}

// projectIDs resolves slugs (or ids) to the ids of the projects the key
// may see.
func projectIDs(ctx context.Context, cl *client.Client, names []string) ([]string, error) {
	var all []prompts.Project
	f := prompts.ProjectFilter{Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		page, more, err := cl.ListProjects(ctx, f)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if !more || len(page) == 0 {
			break
		}
		f.After = page[len(page)-1].ID
	}
	var ids []string
	for _, name := range names {
		name = strings.TrimSpace(name)
		found := ""
		for _, p := range all {
			if p.Slug == name || p.ID == name {
				found = p.ID
			}
		}
		if found == "" {
			return nil, errors.New("no project " + name + " among those this key may see")
		}
		ids = append(ids, found)
	}
	return ids, nil
}

func describeProjects(ids []string) string {
	if ids == nil {
		return "every project"
	}
	return "projects " + strings.Join(ids, ",")
}
