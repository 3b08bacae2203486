// Command embed shows prompts inside an existing service: the service has
// its own mux, routes, middleware and logger, reads its prompts through the
// Go API, and mounts the HTTP interface under a prefix of its own for the
// people who edit and promote prompts.
//
//	go run ./examples/embed
//	curl -s localhost:8081/hello?name=Ada
//	curl -s -H 'X-API-Key: embed-demo-key-0001' localhost:8081/admin/prompts/v1/integration/projects
//
// The interface is mounted at /admin/prompts: its routes answer under
// /admin/prompts/v1/integration/…, and the URLs it sends back (Location,
// Link) are relative, so they stay right under the prefix.
package main

import (
	"context"
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
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
	flag.Parse()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, logger); err != nil {
		logger.Error("embed", "err", err)
		os.Exit(1)
	}
}

// greeter is the service's own feature: it greets with whatever prompt is
// in production now, so a promotion changes it without a deploy.
type greeter struct {
	store     prompts.Store
	projectID string
	logger    *slog.Logger
}

func (g *greeter) hello(w http.ResponseWriter, r *http.Request) {
	p, err := g.store.GetActiveByKey(r.Context(), g.projectID, "greeting", prompts.Production)
	if err != nil {
		g.logger.Error("reading prompt", "err", err)
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
	// Render fills every variable, strictly: a version in production that
	// needs a variable this code does not give is an error, not a greeting
	// with "{{…}}" left in it. (The promotion guard refuses to promote
	// such a version without AllowVariableChange.)
	text, err := p.ActiveVersion.Render(map[string]string{"name": name})
	if err != nil {
		g.logger.Error("rendering prompt", "version", p.ActiveVersion.VersionNumber, "err", err)
		http.Error(w, "the greeting in production does not fit this service", http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(w, text)
}

// logRequests is the service's own middleware; it wraps the prompts
// interface too.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		logger.Info("request", "method", r.Method, "path", r.URL.Path, "took", time.Since(start))
	})
}

// seed creates the project and the prompt the service uses, with one
// version in production.
func seed(ctx context.Context, store prompts.Store) (projectID string, err error) {
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "Greeter"})
	if err != nil {
		return "", err
	}
	p, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "greeting", Name: "Greeting"})
	if err != nil {
		return "", err
	}
	_, err = store.CreateVersion(ctx, prompts.NewVersion{
		PromptID:     p.ID,
		Content:      "Hello, {{name}}!",
		Environments: []prompts.Environment{prompts.Production},
	})
	return proj.ID, err
}

func newMux(store prompts.Store, projectID string, logger *slog.Logger) http.Handler {
	keys := httpapi.NewKeys()
	// A real service reads its keys from its secret store.
	if err := keys.Add(httpapi.Key{Name: "demo", Role: httpapi.RoleAdmin, Secret: "embed-demo-key-0001", ProjectIDs: []string{projectID}}); err != nil {
		panic(err) // a constant, valid key: cannot fail
	}
	api := httpapi.New(store, httpapi.WithAuthenticator(keys), httpapi.WithLogger(logger))

	g := &greeter{store: store, projectID: projectID, logger: logger}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", g.hello)
	mux.Handle("/admin/prompts/", http.StripPrefix("/admin/prompts", api))
	return logRequests(logger, mux)
}

func run(ctx context.Context, addr string, logger *slog.Logger) error {
	store := memstore.New()
	projectID, err := seed(ctx, store)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              addr,
		Handler:           newMux(store, projectID, logger),
		ReadHeaderTimeout: 5 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	logger.Info("listening", "addr", addr, "project_id", projectID)
	select {
	case err := <-errc:
		return err
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
