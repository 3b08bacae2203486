// Command promptsd is the standalone prompts server: the /v1/integration HTTP
// interface over the embedded store, its data in the file prompts.data
// (-data), or over PostgreSQL with -dsn.
//
//	go run ./cmd/promptsd
//
// Most flags can also be set by an environment variable: -addr by
// PROMPTS_ADDR, -data by PROMPTS_DATA, -dsn by PROMPTS_DSN, -api-key by PROMPTS_API_KEY and
// -schema by PROMPTS_SCHEMA, -keys by PROMPTS_KEYS_FILE, -project by
// PROMPTS_PROJECT (names separated by commas), -wait-db by
// PROMPTS_WAIT_DB, -request-timeout by PROMPTS_REQUEST_TIMEOUT,
// -shutdown-grace by PROMPTS_SHUTDOWN_GRACE, -log-level by
// PROMPTS_LOG_LEVEL, -event-retention by PROMPTS_EVENT_RETENTION. A flag
// wins over its variable.
//
// Keys: -api-key is an admin key named default for every project; -key
// NAME:ROLE:SECRET[:SLUG,…] (repeatable) and -keys FILE (one such entry a
// line) add named keys with a role (read, write, deploy, admin), a secret
// given plain or as sha256:<hex> of it, and the slugs of the projects they
// may see. A bad entry stops the start with a message naming it, never
// showing a secret. With no key at all, an admin key is generated and
// printed once at start. -project NAME makes sure a project of that name
// exists (its slug derived from the name); with no -project and an empty
// store, a project named Demo is created, so that there is somewhere to
// put prompts. An admin key creates more with POST
// /v1/integration/projects.
//
// The web interface, at /ui/ (-ui=false turns it off), lets people sign
// in with an API key and read, compare, write, promote and roll back
// prompts, bounded by the key's role and projects as over the API.
//
// Every change is an event: GET /v1/integration/events reads the log, or
// streams it (server-sent events), and the server delivers events to the
// webhooks that admin keys create (-webhooks, -webhooks-allow-private).
//
// The server listens first, then opens the store, waiting for the
// database up to -wait-db. Besides the API it serves, without a key,
// /livez, /readyz (/healthz is /livez) and /metrics (Prometheus). It logs
// one line a request, and the store's changes of state, through log/slog
// on stderr. docs/server.md in the repository says more.
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
	"sync"
	"syscall"
	"time"

	"github.com/lib/pq"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/ui"
	"github.com/promptkit/prompts/webhook"
)

func main() {
	// The signals are caught before anything else: the first stops the
	// server after the requests in flight, a second at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	os.Exit(run(sigs, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run runs the server until a signal on sigs, and returns its exit status:
// 0 after a clean stop or -h, 2 for a bad command line, 1 for any other
// failure. It logs every exit but -h's through slog, on stderr.
func run(sigs <-chan os.Signal, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	level := new(slog.LevelVar) // Info until the flags say otherwise
	// Lines are buffered, and written out every few milliseconds (at once
	// from WARN up), and at every exit of run.
	logs := newLogWriter(stderr, logFlushEvery)
	defer logs.Close()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: level}))
	cfg, err := parseConfig(args, getenv, stderr)
	var usage usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		return 0 // the usage is printed, and that is all that was asked
	case errors.As(err, &usage):
		// The flag package printed the error and the usage.
		logger.Error("exiting: bad command line", "status", 2)
		return 2
	default:
		logger.Error("exiting", "status", 2, "err", err)
		return 2
	}
	level.Set(cfg.logLevel)
	if err := serve(sigs, cfg, logger, logs, level, stdout); err != nil {
		logger.Error("exiting", "status", 1, "err", err)
		return 1
	}
	logger.Info("exiting", "status", 0)
	return 0
}

// logFlushEvery is the most time a log line waits in the buffer: what a
// crash of the process can lose.
const logFlushEvery = 10 * time.Millisecond

// usageError is an error of the command line that the flag package has
// printed already, with the usage.
type usageError struct{ error }

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

	eventRetention time.Duration // how long the event log keeps events
	webhooks       bool          // run the webhook dispatcher
	allowPrivate   bool          // webhook receivers may be on private addresses
	ui             bool          // serve the web interface at /ui/
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
	fs.IntVar(&c.maxConns, "max-conns", 4096, "the most connections open at once; past it, new ones wait in the kernel's backlog")
	fs.DurationVar(&c.eventRetention, "event-retention", prompts.DefaultEventRetention, "how long the event log keeps events; a reader further behind must read everything again (PROMPTS_EVENT_RETENTION)")
	fs.BoolVar(&c.webhooks, "webhooks", true, "deliver events to the webhooks (one dispatcher per server; replicas share the work)")
	fs.BoolVar(&c.allowPrivate, "webhooks-allow-private", false, "let webhooks deliver to loopback, private and link-local addresses (receivers on your own network)")
	fs.BoolVar(&c.ui, "ui", true, "serve the web interface at /ui/, where people sign in with an API key")
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

// serve listens, then opens the store, and serves until the first
// signal; then it drains.
func serve(sigs <-chan os.Signal, cfg config, logger *slog.Logger, logs io.Writer, level slog.Leveler, stdout io.Writer) error {
	entries, err := keyEntries(cfg) // a bad entry stops the start before anything else
	if err != nil {
		return err
	}
	// Listening comes first: a port in use stops the start before the
	// database is touched, and the probes have an answer (/livez ok,
	// /readyz 503) while the store opens.
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	m := newMetrics()
	f := newFront(m, cfg.ui)
	limit := newConnLimit(cfg.maxConns)
	srv := &http.Server{
		Handler:           observed(f, newAccessLog(logs, level, cfg.accessLog), m, cfg.requestTimeout),
		ConnState:         limit.connState,
		ConnContext:       withConnAuth,
		ReadHeaderTimeout: 5 * time.Second,
		// The body must arrive within the request's budget, and the
		// request's context ends at the same deadline, which the store's
		// calls honour. Writing has 5 s more, so that the 408 or 503 of
		// a request at its deadline is sent before the connection closes.
		ReadTimeout:    cfg.requestTimeout,
		WriteTimeout:   cfg.requestTimeout + 5*time.Second,
		IdleTimeout:    60 * time.Second,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(limit.listener(ln)) }()
	logger.Info("listening", "addr", "http://"+ln.Addr().String()+"/v1/integration", "store", storeName(cfg))

	// The first signal ends ctx; a second closes force.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	force, quit := make(chan struct{}), make(chan struct{})
	defer close(quit)
	go func() {
		for n := 1; ; n++ {
			select {
			case sig := <-sigs:
				if n == 1 {
					logger.Info("stopping: finishing the requests in flight; a second signal stops at once", "signal", sig.String(), "grace", cfg.shutdownGrace)
					stop()
					continue
				}
				logger.Warn("second signal: stopping at once", "signal", sig.String())
				close(force)
				return
			case <-quit:
				return
			}
		}
	}()

	release, err := openAPI(ctx, cfg, ln.Addr().String(), entries, logger, stdout, f, m, srv.RegisterOnShutdown)
	if release != nil {
		defer release() // after the drain
	}
	if err != nil && ctx.Err() == nil {
		srv.Close()
		return err
	}
	if err != nil {
		logger.Info("stopped before the store was open", "err", err)
	} else {
		select {
		case err := <-serveErr:
			return err
		case <-ctx.Done():
		}
	}
	return drain(srv, serveErr, cfg.shutdownGrace, force)
}

// openAPI opens the store and puts the API in front of it. The returned
// func releases the store; it is nil after an error.
func openAPI(ctx context.Context, cfg config, addr string, entries []keyEntry, logger *slog.Logger, stdout io.Writer, f *front, m *metrics, onShutdown func(func())) (release func(), err error) {
	watch := newStoreWatch(logger, func(code string) { m.storeErrors.WithLabelValues(code).Inc() })
	m.watchStore(watch)
	st, err := openStore(ctx, cfg, logger, m)
	if err != nil {
		return nil, err
	}
	bg := newBackground(ctx)
	bg.run(func(ctx context.Context) { watch.run(ctx, st.ping) })
	releaseAll := func() { bg.stop(); st.release() }
	defer func() {
		if err != nil {
			releaseAll()
		}
	}()
	if err := ensureProjects(ctx, st.store, cfg.projects, logger); err != nil {
		return nil, err
	}
	shown := "$PROMPTS_API_KEY"
	if len(entries) == 0 {
		var key string
		if entries, key, err = generatedKey(cfg.data, logger); err != nil {
			return nil, err
		}
		if key != "" {
			fmt.Fprintf(stdout, "API key (shown once): %s\n", key)
			shown = key
		}
	}
	keys, err := buildKeys(ctx, st.store, entries)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		projects := "every project"
		if len(e.slugs) > 0 {
			projects = strings.Join(e.slugs, ",")
		}
		logger.Info("API key", "name", e.key.Name, "role", e.key.Role.String(), "projects", projects) // never the secret
	}
	auth := namedKeys{keys} // the API's and the web interface's
	opts := []httpapi.Option{
		httpapi.WithAuthenticator(auth),
		httpapi.WithLogger(logger),
		httpapi.WithErrorObserver(watch.storeError),
	}
	if cfg.allowPrivate {
		opts = append(opts, httpapi.AllowPrivateWebhooks())
	}
	api := httpapi.New(st.store, opts...)
	var web http.Handler // the web interface, at /ui/
	if cfg.ui {
		h, err := ui.New(st.store, auth, ui.WithLogger(logger))
		if err != nil {
			return nil, err
		}
		web = h
	}
	// At the first signal, streams end, so that their clients reconnect
	// to another replica while this one drains.
	onShutdown(api.CloseStreams)
	if cfg.webhooks {
		runDispatcher(bg, st.store, cfg, logger)
	}
	watch.opened()
	// The readiness probe's ping tells the watch too: a replica without
	// traffic learns that its store went away, or came back.
	f.open(api, web, func(probe context.Context) (string, error) {
		started := time.Now()
		ctx, cancel := context.WithTimeout(probe, time.Second)
		defer cancel()
		err := st.ping(ctx)
		watch.pinged(started, err)
		return st.state(), err
	})
	logger.Info("ready", "addr", "http://"+addr+"/v1/integration", "store", storeName(cfg))
	fmt.Fprintf(stdout, "Try: curl -H \"X-API-Key: %s\" http://%s/v1/integration/projects\n", shown, addr)
	if cfg.ui {
		fmt.Fprintf(stdout, "Web UI: http://%s/ui/ (sign in with the API key)\n", addr)
	}
	return releaseAll, nil
}

// background runs the server's own goroutines until stop, which waits
// for them.
type background struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newBackground(parent context.Context) *background {
	ctx, cancel := context.WithCancel(parent)
	return &background{ctx: ctx, cancel: cancel}
}

func (b *background) run(f func(ctx context.Context)) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f(b.ctx)
	}()
}

func (b *background) stop() {
	b.cancel()
	b.wg.Wait()
}

// runDispatcher delivers the events to the webhooks, when the store keeps
// them: a dispatcher, woken at each new event. Replicas on one database
// each run one; the store hands each delivery to one at a time.
func runDispatcher(bg *background, store prompts.Store, cfg config, logger *slog.Logger) {
	ws, ok := prompts.WebhookStoreOf(store) // under the cache, when there is one
	if !ok {
		return
	}
	opts := []webhook.Option{webhook.WithLogger(logger)}
	if cfg.allowPrivate {
		opts = append(opts, webhook.AllowPrivate())
	}
	d := webhook.NewDispatcher(ws, opts...)
	bg.run(func(ctx context.Context) {
		if err := d.Run(ctx); err != nil && ctx.Err() == nil {
			logger.Error("the webhook dispatcher stopped; events are kept and delivered after a restart", "err", err)
		}
	})
	if log, ok := prompts.EventLogOf(store); ok {
		bg.run(func(ctx context.Context) { wakeOnEvents(ctx, log, d) })
	}
}

// wakeOnEvents wakes d at each new event, until ctx ends. (d also polls
// on its own, so a missed wake delays a delivery by a second at most.)
func wakeOnEvents(ctx context.Context, log prompts.EventLog, d *webhook.Dispatcher) {
	last, _ := log.LastEventID(ctx)
	for ctx.Err() == nil {
		err := log.WaitEvents(ctx, last)
		if ctx.Err() != nil {
			return
		}
		n, lerr := log.LastEventID(ctx)
		switch {
		case err == nil && lerr == nil && n > last:
			last = n
			d.Wake()
		default: // the store is down, or woke for nothing: not a spin
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// drain stops the server: the requests in flight have grace to finish,
// unless force closes first.
func drain(srv *http.Server, serveErr <-chan error, grace time.Duration, force <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		select {
		case <-force:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := srv.Shutdown(ctx)
	if err != nil {
		srv.Close() // cut what is left
		select {
		case <-force:
			err = errors.New("stopped at once by a second signal; the requests in flight were cut")
		default:
			err = fmt.Errorf("the requests in flight did not finish within -shutdown-grace %s; they were cut", grace)
		}
	}
	if serr := <-serveErr; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

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
