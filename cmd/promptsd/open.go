package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/ui"
	"github.com/promptkit/prompts/webhook"
)

// openAPI opens the store and puts the API in front of it. The returned
// func releases the store; it is nil after an error.
func openAPI(ctx context.Context, cfg config, base string, entries []keyEntry, logger *slog.Logger, stdout io.Writer, f *front, m *metrics, tr *tracing, onShutdown func(func())) (release func(), err error) {
	watch := newStoreWatch(logger, func(code string) { m.storeErrors.WithLabelValues(code).Inc() })
	m.watchStore(watch)
	st, err := openStore(ctx, cfg, logger, m)
	if err != nil {
		return nil, err
	}
	st.store = tr.store(st.store) // a span for every call when tracing is on
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
		if entries, key, err = generatedKey(ctx, cfg.data, st.keepKey, logger); err != nil {
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
	failures := newKeyFailures()
	var authKeys httpapi.Authenticator = keys
	if ks, ok := prompts.KeyStoreOf(st.store); ok {
		// The store's keys beside the configured ones. Watch follows the
		// event log, so that a key revoked on any replica is forgotten
		// here (within a second; at once with the database's feed).
		sk := httpapi.NewStoreKeys(keys, ks, httpapi.WithKeysLogger(logger))
		warnKeyNameClashes(ctx, ks, entries, logger)
		if log, ok := prompts.EventLogOf(st.store); ok {
			bg.run(func(ctx context.Context) { _ = sk.Watch(ctx, log) })
		}
		authKeys = sk
	}
	auth := namedKeys{keys: authKeys, failures: failures, trustProxy: cfg.trustProxy} // the API's and the web interface's
	g := &guard{auth: auth, streams: newStreamLimit(cfg.maxStreams), failures: failures, trustProxy: cfg.trustProxy}
	opts := []httpapi.Option{
		httpapi.WithAuthenticator(auth),
		httpapi.WithLogger(logger),
		httpapi.WithErrorObserver(watch.storeError),
		httpapi.WithMaxAnswerMemory(cfg.maxAnswerMiB << 20),
	}
	if cfg.allowPrivate {
		opts = append(opts, httpapi.AllowPrivateWebhooks())
	}
	api := httpapi.New(st.store, opts...)
	var web http.Handler // the web interface, at /ui/
	if cfg.ui {
		uiOpts := []ui.Option{ui.WithLogger(logger)}
		if cfg.trustProxy {
			uiOpts = append(uiOpts, ui.WithSecureCookiesIf(forwardedHTTPS))
		}
		oidcOpts, err := cfg.oidc.options(ctx, st.store, cfg.trustProxy, logger)
		if err != nil {
			return nil, err
		}
		uiOpts = append(uiOpts, oidcOpts...)
		h, err := ui.New(st.store, auth, uiOpts...)
		if err != nil {
			return nil, err
		}
		web = h
	}
	// At the first signal, streams end, so that their clients reconnect
	// to another replica while this one drains.
	onShutdown(api.CloseStreams)
	mountMCP(f, cfg, st.store, g, logger, onShutdown)
	if cfg.webhooks {
		runDispatcher(bg, st.store, cfg, logger)
	}
	watch.opened()
	// The readiness probe's ping tells the watch too: a replica without
	// traffic learns that its store went away, or came back.
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.serve(api, w, r) })
	f.open(guarded, web, func(probe context.Context) (string, error) {
		started := time.Now()
		ctx, cancel := context.WithTimeout(probe, time.Second)
		defer cancel()
		err := st.ping(ctx)
		watch.pinged(started, err)
		return st.state(), err
	})
	logger.Info("ready", "addr", base+"/v1/integration", "store", storeName(cfg))
	fmt.Fprintf(stdout, "Try: curl -H \"X-API-Key: %s\" %s/v1/integration/projects\n", shown, base)
	if cfg.ui {
		fmt.Fprintf(stdout, "Web UI: %s/ui/ (%s)\n", base, cfg.oidc.howToSignIn())
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

// forwardedHTTPS reports whether the proxy in front of the server says
// that r came over HTTPS (X-Forwarded-Proto: https).
func forwardedHTTPS(r *http.Request) bool {
	v := r.Header["X-Forwarded-Proto"]
	return len(v) > 0 && strings.EqualFold(strings.TrimSpace(v[len(v)-1]), "https")
}

// warnKeyNameClashes warns of each key kept in the store whose name is a
// configured key's too: a name made before the configuration gained it
// (or on a replica configured otherwise). Both keys work, but the name
// that records who made a change no longer tells which of them did. The
// server starts anyway; a store it cannot list now is said, not fatal.
func warnKeyNameClashes(ctx context.Context, ks prompts.KeyManager, entries []keyEntry, logger *slog.Logger) {
	configured := make(map[string]bool, len(entries))
	for _, e := range entries {
		configured[e.key.Name] = true
	}
	f := prompts.KeyFilter{Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		page, more, err := ks.ListKeys(ctx, f)
		if err != nil {
			logger.Warn("could not check the stored API keys' names against the configured ones", "err", err)
			return
		}
		for _, k := range page {
			if configured[k.Name] {
				logger.Warn("a stored API key has the name of a configured one: both work, and changes record the name, so which made a change cannot be told; revoke the stored key, or rename the configured one",
					"name", k.Name, "stored_key_id", k.ID)
			}
		}
		if !more || len(page) == 0 {
			return
		}
		f.After = page[len(page)-1].ID
	}
}
