package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
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

	"github.com/lib/pq"

	"github.com/promptkit/prompts"
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
	kind := fs.String("kind", "bytes", "bytes: the read-3 response of -body; sql: read 3 from PostgreSQL")
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

	// The standalone server's settings (examples/server).
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

// getActive is sqlstore's read-3 statement (qGetActive in
// sqlstore/queries.go), character for character; {s} stands for the
// quoted schema.
const getActive = `SELECT p.id, p.project_id, p.key, p.name, p.description, p.latest_version_id, p.created_at, v.id, v.version_number, v.content, v.change_summary, v.metadata, v.created_at
FROM {s}.prompts p
LEFT JOIN {s}.deployments d ON d.prompt_id = p.id AND d.environment = $2
LEFT JOIN {s}.versions v ON v.prompt_id = d.prompt_id AND v.version_number = d.version_number
WHERE p.id = $1`

// newSQLHandler returns a handler that runs getActive, prepared, through
// database/sql with the standalone server's pool, for the prompt id at the
// end of the path and production, and writes the row as read 3's JSON
// with its ETag. It checks nothing else: no key, no route, no id syntax.
func newSQLHandler(dsn, schema string) (http.Handler, func(), error) {
	if schema == "" {
		return nil, nil, errors.New("-schema is required")
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(20) // as examples/server
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stmt, err := db.PrepareContext(ctx, strings.ReplaceAll(getActive, "{s}", pq.QuoteIdentifier(schema)))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	closeDB := func() { stmt.Close(); db.Close() }
	ct, cache := []string{"application/json"}, []string{"private, no-cache"}
	bufs := sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		var c struct { // one allocation for the 13 columns
			pid, project, key, name, desc, latest sql.NullString
			vid, content, summary, metadata       sql.NullString
			number                                sql.NullInt64
			created, vcreated                     sql.NullTime
		}
		err := stmt.QueryRowContext(r.Context(), id, "production").Scan(
			&c.pid, &c.project, &c.key, &c.name, &c.desc, &c.latest, &c.created,
			&c.vid, &c.number, &c.content, &c.summary, &c.metadata, &c.vcreated)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		bp := bufs.Get().(*[]byte)
		b := append((*bp)[:0], `{"id":`...)
		b = prompts.AppendString(b, c.pid.String)
		b = append(b, `,"project_id":`...)
		b = prompts.AppendString(b, c.project.String)
		b = append(b, `,"key":`...)
		b = prompts.AppendString(b, c.key.String)
		b = append(b, `,"name":`...)
		b = prompts.AppendString(b, c.name.String)
		b = append(b, `,"description":`...)
		b = appendNull(b, c.desc)
		b = append(b, `,"latest_version_id":`...)
		b = appendNull(b, c.latest)
		b = append(b, `,"active_version":`...)
		if !c.vid.Valid {
			b = append(b, "null"...)
		} else {
			b = append(b, `{"id":`...)
			b = prompts.AppendString(b, c.vid.String)
			b = append(b, `,"prompt_id":`...)
			b = prompts.AppendString(b, c.pid.String)
			b = append(b, `,"version_number":`...)
			b = strconv.AppendInt(b, c.number.Int64, 10)
			b = append(b, `,"content":`...)
			b = prompts.AppendString(b, c.content.String)
			b = append(b, `,"metadata_":`...)
			if c.metadata.Valid {
				b = append(b, c.metadata.String...)
			} else {
				b = append(b, "null"...)
			}
			b = append(b, `,"created_at":`...)
			b = prompts.AppendTime(b, c.vcreated.Time)
			b = append(b, '}')
		}
		b = append(b, '}')
		hd := w.Header()
		hd["Content-Type"] = ct
		hd["Etag"] = []string{etag(b)}
		hd["Cache-Control"] = cache
		hd["Content-Length"] = []string{strconv.Itoa(len(b))}
		w.Write(b) //nolint:errcheck
		*bp = b
		bufs.Put(bp)
	})
	return h, closeDB, nil
}

func appendNull(b []byte, s sql.NullString) []byte {
	if !s.Valid {
		return append(b, "null"...)
	}
	return prompts.AppendString(b, s.String)
}

// etag is the strong tag httpapi sends (appendETag in httpapi/encode.go):
// the CRC-32C and CRC-32 of the body in hex, quoted.
func etag(body []byte) string {
	const hexd = "0123456789abcdef"
	c := crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli))
	x := uint64(c)<<32 | uint64(crc32.ChecksumIEEE(body))
	var t [18]byte
	t[0], t[17] = '"', '"'
	for i := 16; i > 0; i-- {
		t[i] = hexd[x&0xf]
		x >>= 4
	}
	return string(t[:])
}
