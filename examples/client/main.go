// Command client shows a service that reads its prompts from a remote
// prompts server (cmd/promptsd) over HTTP: package client in front of
// the server, the read cache in front of the client, fed by the server's
// event stream, and a snapshot embedded in the binary, so that the
// service starts and answers even when the server cannot be reached.
//
//	go run ./cmd/promptsd -api-key demo-key-0123456789 -project Greeter   # in a shell of its own
//	export PROMPTS_URL=http://127.0.0.1:8080 PROMPTS_API_KEY=demo-key-0123456789 PROMPTS_PROJECT=greeter
//	mkdir -p greeter && printf -- '---\nname: Greeting\n---\nHello, {{name}}!\n' > greeter/greeting.prompt
//	go run ./cmd/prompts apply -dir greeter -promote production   # the prompt "greeting", in production
//	go run ./examples/client &
//	curl -s 'localhost:8082/hello?name=Ada'                         # Hello, Ada!
//
// It listens on 127.0.0.1:8082 (-addr) and reads the prompt "greeting"
// in production, rendered with the query's name. PROMPTS_API_KEY
// (-api-key) needs the role read. PROMPTS_PROJECT (-project) names the
// project by its slug or its id, as for the prompts command: an id is
// used as it is; a slug is looked up on the server (among the projects
// the key sees) and its id remembered.
//
// Without a server, the service answers from snapshot.json, the
// snapshot of a demo project with the slug greeter, and says so with the
// header Prompt-Stale: true; while the server cannot be reached, that
// project stands in for the slug greeter. PROMPTS_PROJECT defaults to
// the snapshot's project id, which no server of yours has: against a
// server, set it. With the server there, a project without the prompt
// "greeting" in production is 503. Write a snapshot of your own project
// with GET /v1/integration/projects/{project_id}/snapshot or
// cache.TakeSnapshot, at build time.
package main

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
)

// snapshotJSON is the snapshot the service answers from while the server
// cannot be reached.
//
//go:embed snapshot.json
var snapshotJSON []byte

// promptKey is the prompt the service reads.
const promptKey = "greeting"

// config is where the server is and which project to read.
type config struct {
	url, apiKey string
	project     string // the project's slug or id; empty: the snapshot's
}

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	addr := flag.String("addr", "127.0.0.1:8082", "address to listen on")
	var cfg config
	flag.StringVar(&cfg.url, "url", os.Getenv("PROMPTS_URL"), "the prompts server's base URL (PROMPTS_URL)")
	flag.StringVar(&cfg.apiKey, "api-key", os.Getenv("PROMPTS_API_KEY"), "an API key with role read (PROMPTS_API_KEY)")
	flag.StringVar(&cfg.project, "project", os.Getenv("PROMPTS_PROJECT"), "the project: its slug, or its id (PROMPTS_PROJECT); the embedded snapshot's when empty")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, cfg, logger); err != nil {
		logger.Error("client", "err", err)
		os.Exit(1)
	}
}

// service answers /hello with the prompt in production, read through a
// cache over a client of the server.
type service struct {
	cl     *client.Client
	cache  *cache.Store
	snap   *cache.Snapshot
	logger *slog.Logger

	// finder looks a slug up on the server; it tries each call once, so
	// that while the server is away the snapshot answers at once.
	finder *client.Client
	slug   string // the project's slug, until it is found

	mu        sync.Mutex
	projectID string    // the project's id, once known
	failedAt  time.Time // when looking the slug up last failed as unavailable
	finding   bool      // whether a request is looking it up
}

// newService makes the client and the cache over it, with the embedded
// snapshot as the cache's fallback. It does no I/O: the server need not
// be there.
func newService(cfg config, logger *slog.Logger) (*service, error) {
	snap, err := client.ParseSnapshot(snapshotJSON)
	if err != nil {
		return nil, fmt.Errorf("the embedded snapshot: %w", err)
	}
	// The default retries: a read that the snapshot can answer is tried
	// once (the cache says so), so that while the server is away the
	// snapshot answers at once.
	cl, err := client.New(cfg.url, cfg.apiKey, client.WithLogger(logger))
	if err != nil {
		return nil, err
	}
	finder, err := client.New(cfg.url, cfg.apiKey, client.WithLogger(logger),
		client.WithRetry(client.RetryPolicy{MaxAttempts: 1, AttemptTimeout: 2 * time.Second}))
	if err != nil {
		return nil, err
	}
	s := &service{cl: cl, cache: cache.New(cl, cache.WithFallback(snap)), snap: snap, logger: logger, finder: finder}
	switch {
	case cfg.project == "":
		s.projectID = snap.Project.ID
	case prompts.ValidID(cfg.project): // ids are upper case, slugs lower case
		s.projectID = cfg.project
	default:
		s.slug = cfg.project
	}
	return s, nil
}

// project returns the id of the project to read. A slug is looked up on
// the server by the first requests, and its id remembered. While the
// server cannot be reached, the snapshot's project stands in if it has
// that slug; then one request at a time, once a second, asks the server
// again, and the others answer from the snapshot at once.
func (s *service) project(ctx context.Context) (string, error) {
	s.mu.Lock()
	if s.projectID != "" {
		defer s.mu.Unlock()
		return s.projectID, nil
	}
	standIn := ""
	if s.snap.Project.Slug == s.slug {
		standIn = s.snap.Project.ID
	}
	if standIn != "" && !s.failedAt.IsZero() && (s.finding || time.Since(s.failedAt) < time.Second) {
		s.mu.Unlock()
		return standIn, nil
	}
	s.finding = true
	s.mu.Unlock()

	p, err := findProject(ctx, s.finder, s.slug)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finding = false
	switch {
	case err == nil:
		if s.projectID == "" {
			s.logger.Info("project found", "slug", p.Slug, "id", p.ID)
		}
		s.projectID = p.ID
		return p.ID, nil
	case errors.Is(err, prompts.ErrUnavailable):
		s.failedAt = time.Now()
		if standIn != "" {
			return standIn, nil
		}
	}
	return "", err
}

// findProject finds the project with this slug among those the API key
// sees, as the prompts command does.
func findProject(ctx context.Context, cl *client.Client, slug string) (prompts.Project, error) {
	page := prompts.ProjectFilter{Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		list, more, err := cl.ListProjects(ctx, page)
		if err != nil {
			return prompts.Project{}, err
		}
		for _, p := range list {
			if p.Slug == slug {
				return p, nil
			}
		}
		if !more || len(list) == 0 {
			return prompts.Project{}, fmt.Errorf("no project %q that the API key sees: %w", slug, prompts.ErrNotFound)
		}
		page.After = list[len(list)-1].ID
	}
}

// follow keeps the cache fresh from the server's event stream until ctx
// ends, reconnecting as the server comes and goes.
func (s *service) follow(ctx context.Context) error {
	return s.cl.Feed().Run(ctx, s.cache)
}

func (s *service) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", s.hello)
	return mux
}

func (s *service) hello(w http.ResponseWriter, r *http.Request) {
	projectID, err := s.project(r.Context())
	if err != nil {
		s.logger.Error("finding the project", "slug", s.slug, "err", err)
		http.Error(w, "prompt unavailable", http.StatusServiceUnavailable)
		return
	}
	// Shared: the answer is the cache's own, read without a copy (this
	// handler changes nothing of it); stale: the server was away.
	p, stale, err := s.cache.ReadActive(r.Context(), prompts.ActiveQuery{
		ProjectID: projectID, Key: promptKey, Environment: prompts.Production, Shared: true,
	})
	if err != nil {
		s.logger.Error("reading prompt", "err", err)
		http.Error(w, "prompt unavailable", http.StatusServiceUnavailable)
		return
	}
	if p.ActiveVersion == nil {
		http.Error(w, "no greeting is in production", http.StatusServiceUnavailable)
		return
	}
	name := r.URL.Query().Get("name")
	if name == "" {
		name = "world"
	}
	text, err := p.ActiveVersion.Render(map[string]string{"name": name})
	if err != nil {
		s.logger.Error("rendering prompt", "version", p.ActiveVersion.VersionNumber, "err", err)
		http.Error(w, "the greeting in production does not fit this service", http.StatusInternalServerError)
		return
	}
	if stale {
		// The server could not be reached: the snapshot, or the last
		// value the cache knew, answered.
		w.Header().Set("Prompt-Stale", "true")
	}
	fmt.Fprintln(w, text)
}

func run(ctx context.Context, addr string, cfg config, logger *slog.Logger) error {
	s, err := newService(cfg, logger)
	if err != nil {
		return err
	}
	// The feed's goroutine is the service's: it ends with fctx, and run
	// waits for it.
	fctx, stopFeed := context.WithCancel(ctx)
	feedDone := make(chan error, 1)
	go func() { feedDone <- s.follow(fctx) }()
	defer func() {
		stopFeed()
		<-feedDone
	}()

	srv := &http.Server{Addr: addr, Handler: s.handler(), ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	logger.Info("listening", "addr", addr, "server", cfg.url, "project", cmp.Or(cfg.project, s.snap.Project.ID))
	select {
	case err := <-errc:
		return err
	case err := <-feedDone:
		feedDone <- err // for the deferred wait
		if ctx.Err() == nil {
			// A refusal that no retry mends, such as a bad key.
			_ = srv.Close()
			<-errc
			return fmt.Errorf("the event stream: %w", err)
		}
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
