package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// testKey is the -api-key of the tests that do not care which.
const testKey = "test-key-0123456789"

// TestServerKeys: named keys with roles, from -key and from -keys, one
// given by its hash; each role allowed what it should and refused the
// rest; the actor of a change is the key's name; no secret is printed.
func TestServerKeys(t *testing.T) {
	is := is.New(t)
	const (
		reader   = "reader-secret-0123456789"
		deployer = "deployer-secret-0123456789"
		writer   = "writer-secret-0123456789"
	)
	sum := sha256.Sum256([]byte(deployer))
	file := filepath.Join(t.TempDir(), "keys.txt")
	is.NoErr(os.WriteFile(file, []byte("# the team's keys\n\nci:deploy:sha256:"+hex.EncodeToString(sum[:])+"\n"+
		"bot:write:"+writer+":alpha\n"), 0o600))
	s := start(t, nil, "-project", "Alpha", "-project", "Beta", "-project", "Gamma", "-key", "dash:read:"+reader+":alpha,beta", "-keys", file)
	is.Equal(s.key, "") // keys were given: none generated
	for _, secret := range []string{reader, deployer, writer, hex.EncodeToString(sum[:])} {
		is.True(!strings.Contains(s.out.String(), secret)) // no secret in the output
	}
	var projects []project
	s.key = reader
	is.Equal(s.call(t, "GET", "/projects", "", &projects).StatusCode, 200)
	is.Equal(len(projects), 2) // the reader sees its two projects, not Gamma
	is.Equal(projects[0].Name, "Alpha")
	is.Equal(projects[1].Name, "Beta")
	s.key = writer
	var all []project
	is.Equal(s.call(t, "GET", "/projects", "", &all).StatusCode, 200)
	is.Equal(len(all), 1) // the writer sees alpha only
	var p prompt
	is.Equal(s.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"k","name":"N"}`, &p).StatusCode, 200)
	is.Equal(s.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"c"}`, nil).StatusCode, 200)
	is.Equal(s.call(t, "PUT", "/prompts/"+p.ID+"/environments/production", `{"version_number":1}`, nil).StatusCode, 403) // a writer may not deploy
	s.key = reader
	is.Equal(s.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"c"}`, nil).StatusCode, 403) // a reader may not write
	s.key = deployer
	is.Equal(s.call(t, "PUT", "/prompts/"+p.ID+"/environments/production", `{"version_number":1}`, nil).StatusCode, 200)
	var history []struct {
		Actor *string `json:"actor"`
	}
	is.Equal(s.call(t, "GET", "/prompts/"+p.ID+"/deployments", "", &history).StatusCode, 200)
	is.Equal(len(history), 1)
	is.Equal(*history[0].Actor, "ci") // the key's name is the actor
	is.NoErr(s.stop(t))
}

// TestServerRefusesBadKeys: a bad key entry stops the start with a
// message naming it, and never the secret.
func TestServerRefusesBadKeys(t *testing.T) {
	const secret = "a-secret-0123456789"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"an unknown role", []string{"-key", "ci:boss:" + secret}, `-key argument 1 (key ci): the second field is not a role: want read, write, deploy or admin`},
		{"an unknown slug", []string{"-project", "Alpha", "-key", "ci:read:" + secret + ":alpha,gamma"}, `-key argument 1 (key ci): no project has the slug "gamma"`},
		{"a duplicate name", []string{"-key", "ci:read:" + secret, "-key", "ci:admin:another-secret-0123456789"}, "-key argument 2: key ci: a key with this name was already added"},
		{"a malformed hash", []string{"-key", "ci:read:sha256:abc"}, "-key argument 1: key ci: the hash must be sha256: and 64 hex digits"},
		{"a short secret", []string{"-key", "ci:read:short"}, "-key argument 1: key ci: the secret must be at least 16 characters"},
		{"a short -api-key", []string{"-api-key", "x"}, "-api-key: the secret must be at least 16 characters"},
		{"a bad name", []string{"-key", "c i:read:" + secret}, `-key argument 1: the name (before the first ':') must be`},
		{"a secret where the role goes", []string{"-key", "ci:" + secret + ":read"}, `-key argument 1 (key ci): the second field is not a role`},
		{"a secret where the name goes", []string{"-key", secret + "!:read:x"}, `-key argument 1: the name`},
		{"a secret's tail where the slugs go", []string{"-project", "Alpha", "-key", "ci:read:long-enough-secret-1:TAIL" + secret}, `-key argument 1 (key ci): a project slug is not one of any project`},
		{"no secret", []string{"-key", "ci:read:"}, `-key argument 1 (key ci): a secret, or sha256:<64 hex digits> of it, is required`},
		{"no role", []string{"-key", secret}, "-key argument 1: want NAME:ROLE:SECRET"},
		{"a missing file", []string{"-keys", "/nonexistent/keys.txt"}, "-keys: open /nonexistent/keys.txt"},
		{"a DSN that is not PostgreSQL's", []string{"-dsn", "mysql:" + secret + "@tcp(db)/x"}, "-dsn must be a PostgreSQL URL"},
		{"another database's URL", []string{"-dsn", "mysql://u:" + secret + "@127.0.0.1/db?tls=true"}, "-dsn must be a PostgreSQL URL"},
		{"a URL lib/pq cannot read", []string{"-dsn", "postgres://u:" + secret + "%zz@127.0.0.1/db"}, "-dsn must be a PostgreSQL URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			cmd := exec.Command(os.Args[0], append([]string{"-addr", "127.0.0.1:0", "-data="}, tc.args...)...)
			cmd.Env = append(os.Environ(), serverVar+"=1")
			out, err := cmd.CombinedOutput()
			is.True(err != nil) // the start stops
			// slog quotes the error: its quotes come escaped.
			if want := strings.ReplaceAll(tc.want, `"`, `\"`); !strings.Contains(string(out), want) {
				t.Errorf("output %q does not say %q", out, want)
			}
			is.True(!strings.Contains(string(out), secret)) // never the secret
		})
	}
}

// A keys file that others may read is refused, as ssh refuses such a
// private key, with the command that mends it.
func TestServerRefusesAReadableKeysFile(t *testing.T) {
	is := is.New(t)
	file := filepath.Join(t.TempDir(), "keys.txt")
	is.NoErr(os.WriteFile(file, []byte("ci:read:a-secret-0123456789\n"), 0o644))
	is.NoErr(os.Chmod(file, 0o644)) // whatever the umask
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-data=", "-keys", file)
	cmd.Env = append(os.Environ(), serverVar+"=1")
	out, err := cmd.CombinedOutput()
	is.True(err != nil) // the start stops
	is.True(strings.Contains(string(out), "chmod 600 "+file))
	is.True(!strings.Contains(string(out), "a-secret")) // never the secret
}

// The usage printed on a bad flag shows no secret from the environment.
func TestServerUsageShowsNoSecret(t *testing.T) {
	is := is.New(t)
	const secret = "env-secret-0123456789"
	cmd := exec.Command(os.Args[0], "-no-such-flag")
	cmd.Env = append(os.Environ(), serverVar+"=1", "PROMPTS_API_KEY="+secret, "PROMPTS_DSN=postgres://u:"+secret+"@db/x")
	out, err := cmd.CombinedOutput()
	is.True(err != nil)                                // a bad flag stops it
	is.True(strings.Contains(string(out), "-api-key")) // with the usage
	is.True(!strings.Contains(string(out), secret))    // and no secret
}
