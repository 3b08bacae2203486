// Command prompts keeps a directory of prompt files and a prompts server
// in agreement, and lets a person at a terminal read, render, promote and
// roll back prompts.
//
//	go install github.com/promptkit/prompts/cmd/prompts@latest
//
//	prompts export   -project SLUG -dir DIR
//	prompts apply    -project SLUG -dir DIR [-dry-run] [-promote ENV] [-reason TEXT] [-message TEXT] [-allow-variable-change] [-allow-missing-partials]
//	prompts snapshot -project SLUG -o FILE
//	prompts get      KEY [-environment ENV [-subject S] | -version N]
//	prompts render   KEY -var NAME=VALUE… [-json-var NAME=JSON…] [-environment ENV [-subject S] | -version N]
//	prompts promote  KEY (-version N | -split N=W,N=W…) -environment ENV [-reason TEXT]
//	prompts rollback KEY -environment ENV [-reason TEXT]
//	prompts history  KEY [-environment ENV] [-limit N]
//	prompts keys     create NAME -role ROLE [-projects SLUG,…] [-expires DURATION] | list | revoke ID|NAME
//	prompts mcp      -project SLUG [-environment ENV]
//
// Every command finds the server by -url, else PROMPTS_URL (its root, as
// client.New takes it), its API key by -api-key, else PROMPTS_API_KEY, and
// the project by -project (its slug, or its id), else PROMPTS_PROJECT.
// Flags may come before or after the KEY. -h after a command says
// everything about it; -json makes the terminal commands and apply answer
// in JSON, for scripts.
//
// keys manages the API keys the server keeps (an admin key): create
// prints the new key's secret, the only time the server shows it; list
// shows every key without secrets, those of the server's configuration
// too (read-only); revoke takes a key's id or name.
//
// Prompt files are those of package promptfile: KEY.prompt, a YAML front
// matter (name, description, metadata) between --- lines, then the
// template, byte for byte.
//
// # apply
//
// apply reads every file first (a broken one stops it before any change,
// naming the file and the line), then the server, and prints its plan:
// one line per prompt, and the server's prompts that have no file, which
// it never touches. A prompt without a file on the server is created; a
// file whose template differs from the latest version's, or whose
// metadata is another JSON value (key order, spacing and escapes aside;
// 1 and 1.0 are the same number), becomes a new version (-message its
// change summary); a changed name or description is updated. With
// -promote ENV, every new version is created active in ENV, with -reason
// in the deployment records, in one atomic step; and a prompt whose file
// is unchanged but whose latest version is not active in ENV gets it
// activated there, so that "apply -promote staging" on every merge leaves
// staging at what the files hold. An activation that would change the
// variables of what is active (the promotion guard) is refused when the
// plan is made, unless -allow-variable-change.
//
// Writes that create carry an Idempotency-Key derived from the project,
// the key, the version the file was compared with and what is sent: a run
// repeated after a failure, or two runs racing, never make a second
// version of one file. Applying the same files twice changes nothing the
// second time.
//
// apply reads only regular files inside -dir, of at most 1 MiB each: a
// symbolic link (to a file or a directory, inside -dir or not), a named
// pipe or a device, and a larger file are each an error naming the file,
// and nothing is applied.
//
// # Splits
//
// promote -split 3=90,4=10 makes the environment serve version 3 to 90%
// of subjects and version 4 to 10% (2 to 10 versions; each weight, 1 to
// 10000, over the sum of the weights is the version's share). A split
// that is not VERSION=WEIGHT,… is an error naming the entry at fault,
// and nothing is sent. get and render take -subject (a user, a session,
// a tenant): where the environment holds a split, they read the version
// it serves that subject, as an application's read with that subject
// would; without it, the split's first entry (-subject "" is an error:
// leave the flag out). Their line on standard
// error, promote's and rollback's answers and history show a split with
// its shares: "split 3 (90%), 4 (10%)". apply -promote ENV counts every
// version of a split held in ENV as active: it leaves a split that
// serves the latest version as it is, and checks the promotion guard
// against each of its versions.
//
// # What the server sends
//
// The command sends the API key to the server's origin only: a redirect
// to another scheme, host or port is an error naming where it led. It
// reads at most 64 MiB of an answer. Before it prints what the server
// sent (names, keys, reasons, errors, a prompt's content), it escapes
// what a terminal would act upon, as Go writes it in a string: an escape
// sequence is shown as \x1b[31m, a C1 control as \u009b, a line break in
// a name as \n; a prompt's content keeps its line breaks and tabs. -json
// answers exact JSON (in which those characters are \u escapes), for
// scripts that need the content byte for byte, as export's files hold
// it.
//
// # mcp
//
// mcp serves the project's prompts active in -environment (production
// by default) over the Model Context Protocol on stdin and stdout, for a
// desktop client that starts the command (docs/mcp.md has the JSON such a
// client takes): prompts/list, prompts/get, the tools of package mcp, and
// notifications/prompts/list_changed when what is active changes. It runs
// until the client closes stdin.
//
// # Exit status
//
// 0: done (for -dry-run: nothing would change). 1: an error: a bad file,
// a bad command line, a refusal or a failure of the server. 2: only with
// -dry-run, something would change, as terraform plan -detailed-exitcode
// answers, so that CI can tell a pull request that changes prompts.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses.
const (
	exitOK      = 0
	exitError   = 1
	exitChanges = 2 // apply -dry-run: something would change
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand.
type command struct {
	name, args, summary string
	run                 func(ctx context.Context, e *env, args []string) int
}

// commands lists the subcommands.
func commands() []command {
	return []command{
		{"export", "-project SLUG -dir DIR", "write a file for every prompt of the project, holding its latest version", runExport},
		{"apply", "-project SLUG -dir DIR [-dry-run] [-promote ENV] [-reason TEXT] [-message TEXT]", "make the server match the files", runApply},
		{"snapshot", "-project SLUG -o FILE", "write the project's snapshot, for cache.WithFallback", runSnapshot},
		{"get", "KEY [-environment ENV [-subject S] | -version N]", "print the content active in an environment (production by default)", runGet},
		{"render", "KEY -var NAME=VALUE... [-json-var NAME=JSON...] [-environment ENV [-subject S] | -version N]", "print the content with its variables filled in, its partials included, as the server renders it", runRender},
		{"promote", "KEY (-version N | -split N=W,N=W...) -environment ENV [-reason TEXT]", "make a version the active one in an environment, or split it between versions", runPromote},
		{"rollback", "KEY -environment ENV [-reason TEXT]", "make active again the version active before the latest change", runRollback},
		{"history", "KEY [-environment ENV] [-limit N]", "list the deployments of a prompt, newest first", runHistory},
		{"env", "list | put NAME [-protected] | rm NAME", "list the project's environments, add or protect one (admin), or remove one (admin)", runEnv},
		{"keys", "create NAME -role ROLE [-projects SLUG,...] [-expires DURATION] | list | revoke ID|NAME", "manage the server's API keys (needs an admin key)", runKeys},
		{"mcp", "-project SLUG [-environment ENV]", "serve the project's prompts over MCP on stdin and stdout, for desktop clients", runMCP},
	}
}

// env is what a command runs with: its streams and the environment.
type env struct {
	getenv         func(string) string
	stdout, stderr io.Writer
}

// errorf prints a message for the person, one line, and returns
// exitError. What it holds of the server is sanitized: a line break in
// it is shown as \n, not as a line that seems to come from the command.
func (e *env) errorf(format string, args ...any) int {
	fmt.Fprintf(e.stderr, "prompts: %s\n", sanitize(fmt.Sprintf(format, args...)))
	return exitError
}

// run runs the command line args and returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	e := &env{getenv: getenv, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return exitError
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	e.errorf("unknown command %q", args[0])
	usage(stderr)
	return exitError
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: prompts COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
Every command takes -url (or PROMPTS_URL), -api-key (or PROMPTS_API_KEY)
and -project, a slug or an id (or PROMPTS_PROJECT). "prompts COMMAND -h"
says more.

What the server sends is printed with its control characters escaped
(an escape sequence shows as \x1b[...); -json gives it exactly. The API
key goes to the server's origin only: a redirect elsewhere is an error.

Exit status: 0 done; 1 an error; 2 apply -dry-run would change something.
`)
}
