// Command server is the standalone prompts server: the /v1/integration HTTP
// interface over the in-memory store, or over PostgreSQL with -dsn.
//
//	go run ./examples/server
//
// Every flag can also be set by an environment variable: -addr by
// PROMPTS_ADDR, -dsn by PROMPTS_DSN, -api-key by PROMPTS_API_KEY and
// -schema by PROMPTS_SCHEMA, -keys by PROMPTS_KEYS_FILE, -project by
// PROMPTS_PROJECT (names separated by commas). A flag wins over its
// variable.
//
// Keys: -api-key is an admin key named default for every project; -key
// NAME:ROLE:SECRET[:SLUG,…] (repeatable) and -keys FILE (one such entry a
// line) add named keys with a role (read, write, deploy, admin), a secret
// given plain or as sha256:<hex> of it, and the slugs of the projects they
// may see. A bad entry stops the start with a message naming it, never
// showing a secret. With no key at all, an admin key is generated and
// printed once at start. With no -project and an empty store, a project named Demo is created, so that
// there is somewhere to put prompts: the HTTP interface cannot create
// projects.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/httpapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	var usage usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0) // -h: the usage is printed, and that is all that was asked
	case errors.As(err, &usage):
		os.Exit(2) // the flag package printed the error and the usage
	default:
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// usageError is an error of the command line that the flag package has
// printed already, with the usage.
type usageError struct{ error }

// config is what the flags and variables set.
type config struct {
	addr     string
	dsn      string
	schema   string
	apiKey   string
	keys     keyList
	keysFile string
	projects []string
	cache    bool
	cacheMiB int64
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
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
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
	fs.StringVar(&c.dsn, "dsn", "", "PostgreSQL URL; empty means the in-memory store (PROMPTS_DSN)")
	fs.StringVar(&c.schema, "schema", env("PROMPTS_SCHEMA", "prompts"), "PostgreSQL schema of the tables, with -dsn (PROMPTS_SCHEMA)")
	fs.StringVar(&c.apiKey, "api-key", "", "an admin key named default, for every project, at least 16 characters; one is generated and printed when no key is given (PROMPTS_API_KEY)")
	fs.Var(&c.keys, "key", "an API key `NAME:ROLE:SECRET[:SLUG,SLUG…]`, ROLE read, write, deploy or admin, SECRET plain or sha256:<hex>, SLUGs the projects it may see (all when none); repeatable")
	fs.BoolVar(&c.cache, "cache", true, "with -dsn, answer reads from a cache that PostgreSQL's notifications keep fresh across replicas")
	fs.Int64Var(&c.cacheMiB, "cache-size", cache.DefaultSize>>20, "the cache's budget, in MiB")
	fs.StringVar(&c.keysFile, "keys", env("PROMPTS_KEYS_FILE", ""), "a `FILE` of keys, one -key entry a line, # comments (PROMPTS_KEYS_FILE)")
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
	if c.dsn != "" && !strings.HasPrefix(c.dsn, "postgres://") && !strings.HasPrefix(c.dsn, "postgresql://") && !strings.Contains(c.dsn, "=") {
		// Not echoed: a DSN may hold a password.
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

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	entries, err := keyEntries(cfg) // a bad entry stops the start before anything else
	if err != nil {
		return err
	}

	var cacheSize int64
	if cfg.cache {
		cacheSize = cfg.cacheMiB << 20
	}
	store, ready, closeStore, err := openStore(ctx, cfg.dsn, cfg.schema, cacheSize, logger)
	if err != nil {
		return err
	}
	defer closeStore()

	if err := ensureProjects(ctx, store, cfg.projects, logger); err != nil {
		return err
	}

	if len(entries) == 0 {
		key, err := newKey()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "API key (shown once): %s\n", key)
		entries = append(entries, keyEntry{where: "the generated key", key: httpapi.Key{Name: "default", Role: httpapi.RoleAdmin, Secret: key}})
	}
	keys, err := buildKeys(ctx, store, entries)
	if err != nil {
		return err
	}
	for _, e := range entries {
		projects := "every project"
		if len(e.slugs) > 0 {
			projects = strings.Join(e.slugs, ",")
		}
		logger.Info("API key", "name", e.key.Name, "role", e.key.Role.String(), "projects", projects) // never the secret
	}

	api := httpapi.New(store,
		httpapi.WithAuthenticator(keys),
		httpapi.WithLogger(logger),
	)
	mux := http.NewServeMux()
	// /livez: the process answers. /readyz: the store answers, within a
	// second (a real ping of the database). /healthz is /livez, kept for
	// the probes that used it. None needs a key.
	live := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	}
	mux.HandleFunc("GET /livez", live)
	mux.HandleFunc("GET /healthz", live)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		state, err := ready(r.Context())
		if err != nil {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "not ready: "+state+" does not answer\n")
			return
		}
		io.WriteString(w, "ready: "+state+"\n")
	})

	handler := routeAPI(api, mux)
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      requestTimeout + 5*time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	logger.Info("listening", "addr", "http://"+ln.Addr().String()+"/v1/integration", "store", storeName(cfg.dsn))

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// requestTimeout bounds each call to the database (deadlineStore): a
// query waiting on a lock or on a slow database is cancelled then, and
// the client gets 503.
const requestTimeout = 15 * time.Second

// routeAPI sends every path under /v1/integration to api as it came, and
// the rest to mux. A ServeMux would answer a path such as
// /v1/integration//prompts with a redirect to its clean form, before the
// API could ask for a key; the API answers such paths itself (401, then
// 404).
func routeAPI(api, mux http.Handler) http.Handler {
	const prefix = "/v1/integration"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == prefix || strings.HasPrefix(p, prefix+"/") {
			api.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func storeName(dsn string) string {
	if dsn == "" {
		return "memory"
	}
	return "postgresql"
}

// ensureProjects makes sure a project of each name exists; with no names
// and no projects at all, it creates one named Demo. It logs every
// project's id, which clients need to create prompts.
func ensureProjects(ctx context.Context, store prompts.Store, names []string, logger *slog.Logger) error {
	existing, err := allProjects(ctx, store)
	if err != nil {
		return err
	}
	if len(names) == 0 && len(existing) == 0 {
		names = []string{"Demo"}
	}
	byName := make(map[string]prompts.Project, len(existing))
	for _, p := range existing {
		byName[p.Name] = p
	}
	for _, name := range names {
		if _, ok := byName[name]; ok {
			continue
		}
		p, err := createProject(ctx, store, name)
		if err != nil {
			return fmt.Errorf("project %q: %w", name, err)
		}
		byName[name] = p
		existing = append(existing, p)
	}
	for _, p := range existing {
		logger.Info("project", "id", p.ID, "name", p.Name)
	}
	return nil
}

// createProject creates a project named name, or finds the one another
// replica created at the same moment. When another project already has the
// slug the name gives ("Demo" and "demo"), it takes the slug with a number
// after it.
func createProject(ctx context.Context, store prompts.Store, name string) (prompts.Project, error) {
	slug := prompts.Slugify(name)
	for i := 1; i <= 20; i++ {
		in := prompts.NewProject{Name: name}
		if i > 1 {
			in.Slug = fmt.Sprintf("%s-%d", slug, i)
		}
		p, err := store.CreateProject(ctx, in)
		if !errors.Is(err, prompts.ErrConflict) {
			return p, err
		}
		all, err := allProjects(ctx, store)
		if err != nil {
			return prompts.Project{}, err
		}
		for _, p := range all {
			if p.Name == name {
				return p, nil // created by another replica
			}
		}
	}
	return prompts.Project{}, fmt.Errorf("no free slug for %q", name)
}

func allProjects(ctx context.Context, store prompts.Store) ([]prompts.Project, error) {
	var all []prompts.Project
	page := prompts.ProjectFilter{Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		ps, more, err := store.ListProjects(ctx, page)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
		if !more || len(ps) == 0 {
			return all, nil
		}
		page.After = ps[len(ps)-1].ID
	}
}

// newKey returns a random key of 32 bytes, URL-safe base64.
func newKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "pk_" + base64.RawURLEncoding.EncodeToString(b), nil
}
