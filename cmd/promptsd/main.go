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
// PROMPTS_LOG_LEVEL, -event-retention by PROMPTS_EVENT_RETENTION,
// -tls-cert and -tls-key by PROMPTS_TLS_CERT and PROMPTS_TLS_KEY. A flag
// wins over its variable.
//
// Keys: -api-key is an admin key named default for every project; -key
// NAME:ROLE:SECRET[:SLUG,…] (repeatable) and -keys FILE (one such entry a
// line) add named keys with a role (read, write, deploy, admin), a secret
// given plain or as sha256:<hex> of it, and the slugs of the projects they
// may see. A bad entry stops the start with a message naming it, never
// showing a secret. With no key at all, an admin key is generated and
// printed once, at the first start; its hash is kept in the database
// with -dsn (every replica accepts it), beside the data file (DATA.key)
// with -data, nowhere in memory only (a new key at every start).
// -project NAME makes sure a project of that name
// exists (its slug derived from the name); with no -project and an empty
// store, a project named Demo is created, so that there is somewhere to
// put prompts. An admin key creates more with POST
// /v1/integration/projects.
//
// The web interface, at /ui/ (-ui=false turns it off), lets people sign
// in with an API key and read, compare, write, promote and roll back
// prompts, bounded by the key's role and projects as over the API.
// With -oidc-issuer, -oidc-client-id, -oidc-client-secret (better
// PROMPTS_OIDC_CLIENT_SECRET, out of ps) and -oidc-role
// CLAIM=VALUE:ROLE[:SLUG,…] (repeatable; the first rule that matches
// decides), people sign in with an OpenID Connect provider instead, their
// email the actor of what they change; -ui-key-sign-in=false leaves only
// that. docs/ui.md says how to set up Google, Okta, Keycloak and Dex.
//
// MCP clients reach the prompts at /mcp (the Model Context Protocol over
// Streamable HTTP, package mcp; -mcp=false turns it off), with an API key
// in X-API-Key or Authorization: Bearer; docs/mcp.md says how to add it
// to a client.
//
// Every change is an event: GET /v1/integration/events reads the log, or
// streams it (server-sent events), and the server delivers events to the
// webhooks that admin keys create (-webhooks, -webhooks-allow-private).
//
// Limits: at most -max-conns connections (4096), -max-conns-per-addr
// from one address (256; one more is closed at once). Past -max-conns, a
// connection is closed to make room, the oldest first of: idle ones,
// requests without a valid key under way for 1 s, event streams; a
// connection that sent no valid key closes after 5 s idle, one that did
// after 60 s. A key holds at most -max-streams-per-key event streams and
// MCP sessions (100); one more is 429 with Retry-After. An address that sends 20
// unknown keys within 10 s gets 429 for a minute on its unknown keys,
// while its valid keys are served. Every request but a stream has
// -request-timeout.
//
// HTTPS: -tls-cert and -tls-key serve HTTPS (HTTP/1.1); the web
// interface's cookies are then Secure. Behind a proxy that ends TLS,
// -trust-proxy believes its X-Forwarded-Proto (https: Secure cookies) and
// the last address of its X-Forwarded-For (the client whose unknown keys
// are counted).
//
// The server listens first, then opens the store, waiting for the
// database up to -wait-db. Besides the API it serves, without a key,
// /livez, /readyz (/healthz is /livez) and /metrics (Prometheus). It logs
// one line a request, and the store's changes of state, through log/slog
// on stderr. With OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, it traces every request and
// every call of its store with OpenTelemetry, exported over OTLP, and
// does no tracing at all otherwise (see tracing.go). The README's
// "Running it" says more.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
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

// serve listens, then opens the store, and serves until the first
// signal; then it drains.
func serve(sigs <-chan os.Signal, cfg config, logger *slog.Logger, logs io.Writer, level slog.Leveler, stdout io.Writer) error {
	entries, err := keyEntries(cfg) // a bad entry stops the start before anything else
	if err != nil {
		return err
	}
	tr, err := newTracing(context.Background(), os.Getenv, logger) // nil without OTEL_EXPORTER_OTLP_ENDPOINT
	if err != nil {
		return err
	}
	defer tr.shutdown(logger) // the last spans, after the drain
	// Listening comes first: a port in use stops the start before the
	// database is touched, and the probes have an answer (/livez ok,
	// /readyz 503) while the store opens.
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	if cfg.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("-tls-cert, -tls-key: %w", err)
		}
		// HTTP/1.1 only, as over plain TCP: one request at a time per
		// connection, which the connection limits count.
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	}
	base := "http://" + ln.Addr().String()
	if cfg.tlsCert != "" {
		base = "https://" + ln.Addr().String()
	}
	m := newMetrics()
	f := newFront(m, cfg.ui)
	limit := newConnLimit(cfg.maxConns, cfg.maxConnsAddr)
	srv := &http.Server{
		Handler:           observed(tr.handler(f), newAccessLog(logs, level, cfg.accessLog), m, cfg.requestTimeout),
		ConnState:         limit.connState,
		ConnContext:       limit.connContext,
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
	sweepCtx, stopSweep := context.WithCancel(context.Background())
	defer stopSweep()
	go limit.sweep(sweepCtx)
	logger.Info("listening", "addr", base+"/v1/integration", "store", storeName(cfg))

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

	release, err := openAPI(ctx, cfg, base, entries, logger, stdout, f, m, tr, srv.RegisterOnShutdown)
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
