package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/httpapi"
)

// config is what the flags and variables set.
type config struct {
	addr     string
	dsn      string
	data     string // the file of the embedded store; "" keeps everything in memory
	schema   string
	apiKey   string
	keys     keyList
	keysFile string
	projects []string
	cache    bool
	cacheMiB int64

	waitDB         time.Duration // how long to wait for the database at start
	requestTimeout time.Duration // a request's whole budget: its body, then the store
	shutdownGrace  time.Duration // how long the requests in flight may take at stop
	logLevel       slog.Level
	accessLog      bool
	maxConns       int
	maxConnsAddr   int    // connections one remote address may hold
	maxStreams     int    // event streams one key may hold open
	maxAnswerMiB   int64  // the answers being written hold at most this, in MiB
	tlsCert        string // with tlsKey: serve HTTPS
	tlsKey         string
	trustProxy     bool // believe X-Forwarded-Proto and X-Forwarded-For

	eventRetention time.Duration // how long the event log keeps events
	webhooks       bool          // run the webhook dispatcher
	allowPrivate   bool          // webhook receivers may be on private addresses
	ui             bool          // serve the web interface at /ui/
	mcp            bool          // serve the Model Context Protocol at /mcp
	oidc           oidcFlags     // sign people in to it with an OpenID Connect provider
}

// projectList is a repeatable flag.
type projectList []string

func (p *projectList) String() string { return strings.Join(*p, ",") }
func (p *projectList) Set(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return errors.New("a project name cannot be empty")
	}
	*p = append(*p, v)
	return nil
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("promptsd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	var c config
	fs.StringVar(&c.addr, "addr", env("PROMPTS_ADDR", "127.0.0.1:8080"), "address to listen on (PROMPTS_ADDR)")
	// -dsn and -api-key take their variables only after parsing: a flag's
	// default is printed with the usage, and these may hold secrets.
	fs.StringVar(&c.dsn, "dsn", "", "a PostgreSQL `URL` (postgres://user@host/db?sslmode=disable) or key=value connection string; empty: the embedded store, on -data (PROMPTS_DSN)")
	fs.StringVar(&c.data, "data", env("PROMPTS_DATA", defaultData), "without -dsn, the `FILE` that keeps the data (every write fsync'd before its answer); -data= keeps everything in memory only (PROMPTS_DATA)")
	fs.StringVar(&c.schema, "schema", env("PROMPTS_SCHEMA", "prompts"), "PostgreSQL schema of the tables, with -dsn (PROMPTS_SCHEMA)")
	fs.StringVar(&c.apiKey, "api-key", "", "an admin key named default, for every project, at least 16 characters; one is generated and printed when no key is given (PROMPTS_API_KEY)")
	fs.Var(&c.keys, "key", "an API key `NAME:ROLE:SECRET[:SLUG,SLUG…]`, ROLE read, write, deploy or admin, SECRET plain or sha256:<hex>, SLUGs the projects it may see (all when none); repeatable")
	fs.BoolVar(&c.cache, "cache", true, "with -dsn, answer reads from a cache that PostgreSQL's notifications keep fresh across replicas")
	fs.Int64Var(&c.cacheMiB, "cache-size", cache.DefaultSize>>20, "the cache's budget, in MiB")
	fs.StringVar(&c.keysFile, "keys", env("PROMPTS_KEYS_FILE", ""), "a `FILE` of keys, one -key entry a line, # comments (PROMPTS_KEYS_FILE)")
	fs.DurationVar(&c.waitDB, "wait-db", 30*time.Second, "with -dsn, how long to wait at start for a database that does not answer, trying with a backoff (PROMPTS_WAIT_DB)")
	fs.DurationVar(&c.requestTimeout, "request-timeout", 15*time.Second, "the longest a request takes: its body must arrive, and the store answer, within it; else 408 or 503 (PROMPTS_REQUEST_TIMEOUT)")
	fs.DurationVar(&c.shutdownGrace, "shutdown-grace", 20*time.Second, "at the first SIGINT or SIGTERM, how long the requests in flight may take before they are cut; a second signal cuts them at once (PROMPTS_SHUTDOWN_GRACE)")
	fs.TextVar(&c.logLevel, "log-level", slog.LevelInfo, "the least level logged: debug, info (one line a request), warn or error (PROMPTS_LOG_LEVEL)")
	fs.BoolVar(&c.accessLog, "access-log", true, "log one line a request, at info")
	fs.IntVar(&c.maxConns, "max-conns", 4096, "the most connections open at once; past it, one is closed to make room, the oldest first of: idle connections, requests without a valid key under way for 1s, event streams (their clients resume); while every connection is a request with a key under way, new ones wait in the kernel's backlog. A connection that sent no valid key closes after 5s idle, one that did after 60s")
	fs.IntVar(&c.maxConnsAddr, "max-conns-per-addr", 256, "the most connections one remote address may hold; one more is closed at once (behind a proxy, every connection is the proxy's)")
	fs.IntVar(&c.maxStreams, "max-streams-per-key", 100, "the most event streams one key may hold open; one more is 429 with Retry-After. An address that sends 20 unknown keys within 10s gets 429 for a minute, for unknown keys only")
	fs.Int64Var(&c.maxAnswerMiB, "max-answer-memory", httpapi.DefaultMaxAnswerMemory>>20, "the most memory, in `MiB`, that the answers being written to clients hold at once; past it, a read is 503 with Retry-After: 1, at once when the answers being written hold it all (a change is always answered, and a larger answer is served when it is the only one), so that slow clients of large answers make other reads wait rather than the memory grow. A snapshot holds 64 KiB of it at a time, a page of a list what its items hold, another answer its whole size")
	fs.StringVar(&c.tlsCert, "tls-cert", env("PROMPTS_TLS_CERT", ""), "with -tls-key, serve HTTPS with this certificate `FILE` (PEM, the chain after the leaf); the web interface's cookies are then Secure (PROMPTS_TLS_CERT)")
	fs.StringVar(&c.tlsKey, "tls-key", env("PROMPTS_TLS_KEY", ""), "the private key `FILE` (PEM) of -tls-cert (PROMPTS_TLS_KEY)")
	fs.BoolVar(&c.trustProxy, "trust-proxy", false, "behind a proxy that ends TLS: X-Forwarded-Proto: https makes the web interface's cookies Secure, and the last address of X-Forwarded-For is the client's, whose unknown keys are counted")
	fs.DurationVar(&c.eventRetention, "event-retention", prompts.DefaultEventRetention, "how long the event log keeps events; a reader further behind must read everything again (PROMPTS_EVENT_RETENTION)")
	fs.BoolVar(&c.webhooks, "webhooks", true, "deliver events to the webhooks (one dispatcher per server; replicas share the work). Each webhook has its turn: one whose receiver never answers delays the others by one attempt (10s) at most")
	fs.BoolVar(&c.allowPrivate, "webhooks-allow-private", false, "let webhooks deliver to loopback, private and link-local addresses (receivers on your own network)")
	fs.BoolVar(&c.mcp, "mcp", true, "serve the Model Context Protocol at /mcp (Streamable HTTP), for MCP clients with an API key in X-API-Key or Authorization: Bearer; a key's sessions count with its event streams (-max-streams-per-key)")
	fs.BoolVar(&c.ui, "ui", true, "serve the web interface at /ui/, where people sign in with an API key: each sign-in form works once, a key holds at most 10 sessions and the server 10,000 (the least recently used end first), and failed sign-ins are limited to 10 a minute per address and key prefix")
	c.oidc.register(fs, env)
	var projects projectList
	fs.Var(&projects, "project", "a project `NAME` that exists after start; repeatable (PROMPTS_PROJECT, comma-separated)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, err
		}
		return config{}, usageError{err}
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if c.maxConns < 1 {
		return config{}, errors.New("-max-conns must be at least 1")
	}
	if c.maxConnsAddr < 1 {
		return config{}, errors.New("-max-conns-per-addr must be at least 1")
	}
	if c.maxStreams < 1 {
		return config{}, errors.New("-max-streams-per-key must be at least 1")
	}
	if c.maxAnswerMiB < 1 || c.maxAnswerMiB > maxAnswerMiB {
		return config{}, fmt.Errorf("-max-answer-memory must be between 1 and %d (MiB)", maxAnswerMiB)
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return config{}, errors.New("-tls-cert and -tls-key go together: give both, or neither")
	}
	if c.cacheMiB < 1 {
		return config{}, errors.New("-cache-size must be at least 1 (MiB); -cache=false turns the cache off")
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["dsn"] {
		c.dsn = getenv("PROMPTS_DSN")
	}
	if !given["api-key"] {
		c.apiKey = getenv("PROMPTS_API_KEY")
	}
	if err := c.oidc.check(given, getenv, c.ui); err != nil {
		return config{}, err
	}
	if v := getenv("PROMPTS_LOG_LEVEL"); v != "" && !given["log-level"] {
		if err := c.logLevel.UnmarshalText([]byte(v)); err != nil {
			return config{}, fmt.Errorf("PROMPTS_LOG_LEVEL: %q is not a level: want debug, info, warn or error", v)
		}
	}
	for _, d := range []struct {
		flag, env string
		v         *time.Duration
	}{{"wait-db", "PROMPTS_WAIT_DB", &c.waitDB}, {"request-timeout", "PROMPTS_REQUEST_TIMEOUT", &c.requestTimeout}, {"shutdown-grace", "PROMPTS_SHUTDOWN_GRACE", &c.shutdownGrace}, {"event-retention", "PROMPTS_EVENT_RETENTION", &c.eventRetention}} {
		if v := getenv(d.env); v != "" && !given[d.flag] {
			var err error
			if *d.v, err = time.ParseDuration(v); err != nil {
				return config{}, fmt.Errorf("%s: %q is not a duration such as 30s", d.env, v)
			}
		}
		if *d.v < 0 || (*d.v == 0 && (d.flag == "request-timeout" || d.flag == "event-retention")) {
			return config{}, fmt.Errorf("-%s must be a positive duration such as 30s", d.flag)
		}
	}
	if c.dsn != "" && given["data"] && c.data != "" {
		return config{}, errors.New("-data and -dsn name two stores: give one")
	}
	if c.dsn != "" && !validDSN(c.dsn) {
		// Not echoed, nor the driver's error, which quotes it: a DSN may
		// hold a password.
		return config{}, errors.New("-dsn must be a PostgreSQL URL (postgres://user@host/db) or a key=value connection string (host=… dbname=…)")
	}
	if len(projects) == 0 {
		for _, name := range strings.Split(getenv("PROMPTS_PROJECT"), ",") {
			if name = strings.TrimSpace(name); name != "" {
				projects = append(projects, name)
			}
		}
	}
	c.projects = projects
	return c, nil
}

// maxAnswerMiB is the largest -max-answer-memory: 1 TiB, far past any
// machine's memory, and far from overflowing when counted in bytes.
const maxAnswerMiB = 1 << 20

// validDSN reports whether dsn is a PostgreSQL URL (postgres:// or
// postgresql://) or a key=value connection string that lib/pq reads.
func validDSN(dsn string) bool {
	if scheme, _, ok := strings.Cut(dsn, "://"); ok && scheme != "postgres" && scheme != "postgresql" {
		return false // another database's URL, which lib/pq would read as one key=value pair
	}
	_, err := pq.NewConnector(dsn)
	return err == nil
}

// defaultData is the data file of the embedded store unless -data says
// otherwise: in the working directory.
const defaultData = "prompts.data"

func storeName(cfg config) string {
	switch {
	case cfg.dsn != "":
		return "postgresql"
	case cfg.data != "":
		return "file"
	}
	return "memory"
}
