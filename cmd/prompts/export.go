package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/promptfile"
)

// runExport writes a file for every prompt of the project, holding its
// latest version: a Dotprompt file for a dotprompt version, a file marked
// prompts.format: plain for a plain one (promptfile.ForVersion). A file that holds that already is left as it is; files
// of prompts the server does not have are left too.
func runExport(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "export", true)
	dir := f.String("dir", "", "the directory of prompt files (made if missing)")
	if _, code, ok := f.parse(args, 0); !ok {
		return code
	}
	if *dir == "" {
		return f.bad("-dir is required")
	}
	cl, project, err := f.connect(ctx)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	list, err := listPrompts(ctx, cl, project.ID)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return e.errorf("%v", err)
	}
	// Every write stays inside the directory, whatever a key or a
	// symbolic link in it says.
	root, err := os.OpenRoot(*dir)
	if err != nil {
		return e.errorf("%v", err)
	}
	defer root.Close()
	tw := newTable(e.stdout)
	code := exitOK
	written, same := 0, 0
	for _, p := range list {
		name, err := promptfile.Path(p.Key)
		if err != nil {
			code = e.errorf("%s: %v", p.Key, err)
			continue
		}
		if p.LatestVersionID == "" {
			row(tw, "skipped", sanitize(p.Key), "no version yet")
			continue
		}
		v, err := latestVersion(ctx, cl, p.ID)
		if err != nil {
			code = e.errorf("%s: %s", p.Key, describe(err))
			continue
		}
		data, err := promptfile.Format(promptfile.ForVersion(p, v))
		if err != nil {
			code = e.errorf("%s: %v", p.Key, err)
			continue
		}
		if old, err := root.ReadFile(name); err == nil && bytes.Equal(old, data) {
			row(tw, "unchanged", name, "version "+strconv.Itoa(v.VersionNumber))
			same++
			continue
		}
		if err := writeFile(root, name, data); err != nil {
			code = e.errorf("%s: %v", name, err)
			continue
		}
		row(tw, "wrote", name, "version "+strconv.Itoa(v.VersionNumber))
		written++
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "%d written, %d unchanged, in %s (project %s)\n", written, same, sanitize(*dir), sanitize(project.Slug))
	return code
}

// writeFile writes data to name under root through a temporary file and
// a rename, so that no reader sees half a file.
func writeFile(root *os.Root, name string, data []byte) error {
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := name + ".tmp-prompts"
	if err := root.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}

// listPrompts returns every prompt of the project, oldest first.
func listPrompts(ctx context.Context, cl *client.Client, projectID string) ([]prompts.Prompt, error) {
	var all []prompts.Prompt
	f := prompts.PromptFilter{ProjectIDs: []string{projectID}, Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		list, more, err := cl.ListPrompts(ctx, f)
		if err != nil {
			return nil, err
		}
		all = append(all, list...)
		if !more || len(list) == 0 {
			return all, nil
		}
		f.After = list[len(list)-1].ID
	}
}

// latestVersion returns the newest version of a prompt that has one.
func latestVersion(ctx context.Context, cl *client.Client, promptID string) (prompts.PromptVersion, error) {
	list, _, err := cl.ListVersions(ctx, promptID, prompts.Page{Limit: 1})
	if err != nil {
		return prompts.PromptVersion{}, err
	}
	if len(list) == 0 {
		return prompts.PromptVersion{}, errNoVersion
	}
	return list[0], nil
}

var errNoVersion = errors.New("the prompt has no version")
