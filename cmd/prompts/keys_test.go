package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

var createdSecret = regexp.MustCompile(`Secret \(shown once, keep it now\): (pk_[A-Za-z0-9_-]{43})\n`)

// keys create prints the secret once, and the key works; keys list shows
// every key without secrets; keys revoke by name ends it.
func TestKeysCreateListRevoke(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	r := cli(t, s, nil, "keys", "create", "deployer", "-role", "deploy", "-projects", "support-bot", "-expires", "720h")
	is.Equal(r.code, 0)
	m := createdSecret.FindStringSubmatch(r.stdout)
	is.True(m != nil) // the secret, once
	secret := m[1]
	is.True(strings.Contains(r.stdout, "role deploy, projects "+s.project.ID))

	r = cli(t, s, []string{"PROMPTS_API_KEY=" + secret}, "history", "nope")
	is.Equal(r.code, 1)
	is.True(!strings.Contains(r.stderr, "API key")) // the key itself is accepted: the prompt is what is missing

	r = cli(t, s, nil, "keys", "list")
	is.Equal(r.code, 0)
	is.True(!strings.Contains(r.stdout, secret))
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	is.Equal(len(lines), 4) // the header, ci and writer (config), deployer (store)
	is.True(strings.HasPrefix(lines[3], "deployer"))
	is.True(strings.Contains(lines[1], "config"))
	is.True(strings.Contains(lines[3], "store"))

	r = cli(t, s, nil, "keys", "list", "-json")
	is.Equal(r.code, 0)
	var keys []map[string]any
	is.NoErr(json.Unmarshal([]byte(r.stdout), &keys))
	is.Equal(len(keys), 3)

	r = cli(t, s, nil, "keys", "revoke", "ci")
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, "configuration")) // read-only
	r = cli(t, s, nil, "keys", "revoke", "deployer")
	is.Equal(r.code, 0)
	r = cli(t, s, []string{"PROMPTS_API_KEY=" + secret}, "history", "nope")
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, "API key")) // refused now

	is.Equal(cli(t, s, nil, "keys", "create", "x", "-role", "owner").code, 1)
	is.Equal(cli(t, s, nil, "keys", "create", "y", "-role", "read", "-projects", "nope").code, 1)
	is.Equal(cli(t, s, nil, "keys", "frobnicate").code, 1)
	r = cli(t, s, nil, "keys", "create", "-role", "read")
	is.Equal(r.code, 1)
	is.True(strings.HasPrefix(r.stderr, "prompts keys: the new key's NAME is required\n")) // not a prompt's KEY
	r = cli(t, s, nil, "keys", "revoke")
	is.Equal(r.code, 1)
	is.True(strings.HasPrefix(r.stderr, "prompts keys: the key's ID or NAME is required\n"))
	is.Equal(cli(t, s, []string{"PROMPTS_API_KEY=" + writeKey}, "keys", "list").code, 1) // not an admin
}
