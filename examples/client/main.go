// Command client shows a service that reads its prompts from a remote
// prompts server (cmd/promptsd) over HTTP: package client in front of
// the server, the read cache in front of the client, fed by the server's
// event stream, and a snapshot embedded in the binary, so that the
// service starts and answers even when the server cannot be reached.
//
//	go run ./cmd/promptsd -api-key demo-key-0123456789 -project Greeter
//	PROMPTS_URL=http://127.0.0.1:8080 PROMPTS_API_KEY=demo-key-0123456789 \
//	PROMPTS_PROJECT=<the project's id> go run ./examples/client
//	curl -s localhost:8082/hello?name=Ada
//
// Without a server (or before its project has the prompt "greeting"),
// the service answers from snapshot.json, the snapshot of a demo project
// (PROMPTS_PROJECT defaults to its id); such answers carry the header
// Prompt-Stale: true. Write a snapshot of your own project with
// GET /v1/integration/projects/{project_id}/snapshot or
// cache.TakeSnapshot, at build time.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
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
	url, apiKey, projectID string
}

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	addr := flag.String("addr", "127.0.0.1:8082", "address to listen on")
	var cfg config
	flag.StringVar(&cfg.url, "url", os.Getenv("PROMPTS_URL"), "the prompts server's base URL (PROMPTS_URL)")
	flag.StringVar(&cfg.apiKey, "api-key", os.Getenv("PROMPTS_API_KEY"), "an API key with role read (PROMPTS_API_KEY)")
	flag.StringVar(&cfg.projectID, "project", os.Getenv("PROMPTS_PROJECT"), "the project's id (PROMPTS_PROJECT); the embedded snapshot's when empty")
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
	cl        *client.Client
	cache     *cache.Store
	projectID string
	logger    *slog.Logger
}

// newService makes the client and the cache over it, with the embedded
// snapshot as the cache's fallback. It does no I/O: the server need not
// be there.
func newService(cfg config, logger *slog.Logger) (*service, error) {
	snap, err := client.ParseSnapshot(snapshotJSON)
	if err != nil {
		return nil, fmt.Errorf("the embedded snapshot: %w", err)
	}
	if cfg.projectID == "" {
		cfg.projectID = snap.Project.ID
	}
	// The default retries: a read that the snapshot can answer is tried
	// once (the cache says so), so that while the server is away the
	// snapshot answers at once.
	cl, err := client.New(cfg.url, cfg.apiKey, client.WithLogger(logger))
	if err != nil {
		return nil, err
	}
	return &service{
		cl:        cl,
		cache:     cache.New(cl, cache.WithFallback(snap)),
		projectID: cfg.projectID,
		logger:    logger,
	}, nil
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
	p, stale, err := s.cache.GetActiveByKeyStale(r.Context(), s.projectID, promptKey, prompts.Production)
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
	logger.Info("listening", "addr", addr, "server", cfg.url, "project_id", s.projectID)
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
