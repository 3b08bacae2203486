package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the PostgreSQL driver

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/internal/wire"
	"github.com/promptkit/prompts/sqlstore"
)

// helperArg, as the first argument, runs this command as one of the bare
// servers: the baselines the standalone server is measured against.
const helperArg = "-bare-server"

// runHelper serves on a free loopback port, says so on standard output
// ("listening on 127.0.0.1:port"), and stops at SIGTERM or SIGINT, when
// its standard input closes (the harness that started it is gone), or
// after -lifetime, whichever comes first.
func runHelper(args []string) error {
	fs := flag.NewFlagSet("bare-server", flag.ContinueOnError)
	kind := fs.String("kind", "bytes", "bytes: the read-3 response of -body; sql: read 3 from PostgreSQL; otlp: an OTLP/HTTP receiver that discards what it gets")
	lifetime := fs.Duration("lifetime", 10*time.Minute, "exit after this long")
	body := fs.String("body", "", "with -kind bytes, the response to send, as saved by the harness")
	dsn := fs.String("dsn", "", "with -kind sql, the PostgreSQL URL")
	schema := fs.String("schema", "", "with -kind sql, the schema of sqlstore's tables")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var h http.Handler
	switch *kind {
	case "bytes":
		b, err := os.ReadFile(*body)
		if err != nil {
			return err
		}
		var r readResponse
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		h = bytesHandler(r)
	case "sql":
		sh, closeDB, err := newSQLHandler(*dsn, *schema)
		if err != nil {
			return err
		}
		defer closeDB()
		h = sh
	case "otlp":
		h = otlpSink()
	default:
		return fmt.Errorf("unknown -kind %q", *kind)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *lifetime)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // returns when the harness is gone
		cancel()
	}()

	// The standalone server's settings (cmd/promptsd).
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(os.Stderr, "", 0),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "listening on %s\n", ln.Addr())
	if err := out.Flush(); err != nil {
		return err
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	_ = srv.Close()
	return nil
}

// bytesHandler answers every request with r's body and headers, and does
// nothing else: the most a Go HTTP server can do here.
func bytesHandler(r readResponse) http.Handler {
	ct, etag, cache := []string{r.ContentType}, []string{r.ETag}, []string{r.CacheControl}
	length := []string{strconv.Itoa(len(r.Body))}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h["Content-Type"] = ct
		h["Etag"] = etag
		h["Cache-Control"] = cache
		h["Content-Length"] = length
		w.Write(r.Body) //nolint:errcheck
	})
}

// newSQLHandler returns a handler that reads the prompt whose id ends the
// path, in production, with sqlstore's GetActive over the standalone
// server's pool settings, and writes it as httpapi does (the same encoder
// and entity tag, from internal/wire). It checks nothing else: no key, no
// route, no id syntax. So it costs what the standalone server on
// PostgreSQL cannot avoid, and shares its SQL, JSON and tag rather than
// keeping copies that could drift.
func newSQLHandler(dsn, schema string) (http.Handler, func(), error) {
	if schema == "" {
		return nil, nil, errors.New("-schema is required")
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(20) // as cmd/promptsd
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
	store, err := sqlstore.New(db, sqlstore.WithSchema(schema))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	closeDB := func() { store.Close(); db.Close() }
	ct, cache := []string{"application/json"}, []string{"private, no-cache"}
	bufs := sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		a, err := store.GetActive(r.Context(), id, prompts.Production)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		bp := bufs.Get().(*[]byte)
		b := api.AppendActive((*bp)[:0], a)
		hd := w.Header()
		hd["Content-Type"] = ct
		hd["Etag"] = []string{string(wire.AppendETag(nil, a))}
		hd["Cache-Control"] = cache
		hd["Content-Length"] = []string{strconv.Itoa(len(b))}
		w.Write(b) //nolint:errcheck
		*bp = b
		bufs.Put(bp)
	})
	return h, closeDB, nil
}

// otlpSink accepts OTLP/HTTP exports and discards them, answering each
// with an empty ExportTraceServiceResponse (an empty protobuf message):
// the collector of a traced server, at the least cost of its own.
func otlpSink() http.Handler {
	ct := []string{"application/x-protobuf"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header()["Content-Type"] = ct
		w.WriteHeader(http.StatusOK)
	})
}
