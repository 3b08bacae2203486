// Command load measures read 3 of the interface (GET
// /v1/integration/prompts/{id}, a prompt with its production version) over
// real HTTP against the physical limit of the machine, in one run:
//
//	go run ./bench/load                              # memstore only
//	go run ./bench/load -dsn 'postgres://postgres@127.0.0.1:5432/prompts_test?sslmode=disable'
//
// It starts, each as a process of its own listening on 127.0.0.1:
//
//   - bare: a bare net/http server that answers every request with the very
//     bytes (and the Content-Type, ETag and Cache-Control) of the standalone
//     server's read-3 response: the ceiling of Go HTTP on this machine;
//   - memstore: the standalone server (cmd/promptsd, built with go build
//     into a temporary directory) on its in-memory store, seeded over HTTP
//     with one prompt whose version is active in production;
//   - with -dsn, bare-sql: a bare handler that reads the prompt with
//     sqlstore's GetActive (one prepared statement, with the standalone
//     server's pool size) and writes it with httpapi's encoder and ETag;
//   - with -dsn, sqlstore: the standalone server on PostgreSQL, in a schema
//     of its own that is dropped at the end.
//
// With -before BINARY it also starts an earlier build of the standalone
// server on memstore, alternating with the current one round by round, and
// reports the current build's throughput as a ratio to that build's: the
// way to measure a change, since the ratio of two builds run back to back
// moves far less with the host's noise than either's ratio to bare.
//
// With -traced it also starts the current build with OpenTelemetry
// tracing on (OTEL_EXPORTER_OTLP_ENDPOINT at a helper that receives OTLP
// over HTTP and discards it), and reports its ratio to the same build
// without tracing: the cost of tracing every request, or those the
// sampler keeps (the harness's own OTEL_ variables, such as
// OTEL_TRACES_SAMPLER, go to that server, and to no other).
//
// With -render it also measures render (POST
// /v1/integration/prompts/{id}/render) of a chat prompt with one partial
// and an input schema (as httpapi's BenchmarkRenderPartialVsRead), on the
// same server on memstore as read 3, and reports what a render costs as a
// multiple of a read 3 there: read 3's req/s over render's, round by
// round (goal: at most 1.5x). wrk sends the POST with a Lua script the
// harness writes into its temporary directory. With -before as well, it
// renders on the earlier build too, in the same rounds, and reports both
// builds' costs and this build's render against the earlier one's.
//
// Before measuring, it checks that each baseline answers exactly what its
// server answers: the same body and headers.
//
// It drives each with wrk (the same threads, connections and duration, and
// the header X-API-Key), after a warm-up, alternating the targets over
// -rounds rounds (forward, then backward, so that a baseline and its
// server always run back to back), and prints requests per second and p50
// and p99 latency, the medians of the rounds, and each server's ratio to
// its baseline (memstore to bare, sqlstore to bare-sql): the median of the
// rounds' ratios, with their range. Where perf works it also counts each
// server process's CPU cycles per request: a second estimate of the cost
// ratio, which does not depend on the CPU time a shared host grants.
//
// wrk is a Debian package: apt-get install -y wrk. It runs with one thread
// and 16 connections: one thread because a load client on the same cores
// takes CPU from the server (a Go client would take far more); 16
// connections because that keeps a server busy with requests queued behind
// each other while the latency stays that of a few requests, and stays
// under the 20 connections of the standalone server's PostgreSQL pool, so
// that no request waits for a connection: what is measured is the read,
// not the pool.
//
// By default the processes are pinned (taskset): wrk to the last CPU, the
// servers to the others. On a 2-core machine each server then runs on one
// core (its GOMAXPROCS follows, 1) and wrk on the other, with room to spare
// (it uses about half of it): the figures are what one core of server
// serves, and the scheduler's placement, which on 2 shared cores moved the
// p99 to milliseconds, is out of the comparison. PostgreSQL's backends are
// not pinned. -pin=false lets the scheduler place everything.
//
// The helper processes stop by themselves: they are killed at the end and
// on interrupt, on Linux the kernel kills them if this command dies, and the
// bare servers also exit when their standard input (a pipe from this
// command) closes or their lifetime runs out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == helperArg {
		// A bare server, started by this very command (see helper.go).
		if err := runHelper(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "load helper:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if ctx.Err() != nil {
			err = errors.New("interrupted")
		}
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	dsn         string
	duration    time.Duration
	warmup      time.Duration
	connections int
	threads     int
	rounds      int
	pin         bool
	cycles      bool
	wrk         string
	server      string
	openedUI    bool
	before      string
	traced      bool
	render      bool
	subject     bool
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.dsn, "dsn", "", "PostgreSQL URL; with it, also measure the server on sqlstore against a bare single-query handler")
	fs.DurationVar(&c.duration, "duration", 3*time.Second, "length of each wrk run (whole seconds)")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "length of the warm-up run of each target, not counted")
	fs.IntVar(&c.connections, "connections", 16, "wrk connections (-c), kept open")
	fs.IntVar(&c.threads, "threads", 1, "wrk threads (-t)")
	fs.IntVar(&c.rounds, "rounds", 10, "rounds; each runs every target once, in alternating order")
	fs.BoolVar(&c.pin, "pin", true, "pin wrk to the last CPU and the servers to the others (taskset); -pin=false lets the scheduler place them")
	fs.BoolVar(&c.cycles, "cycles", true, "also count each server's CPU cycles per request with perf stat, where perf works")
	fs.StringVar(&c.wrk, "wrk", "wrk", "the wrk command")
	fs.StringVar(&c.server, "server", "", "a standalone server binary to measure instead of building ./cmd/promptsd (to compare builds)")
	fs.StringVar(&c.before, "before", "", "the standalone server binary of an earlier build, also measured on memstore; the memstore row is then its ratio to that build (goal 0.95x), alternating with it round by round")
	fs.BoolVar(&c.traced, "traced", false, "also measure the server on memstore with OpenTelemetry tracing on (OTEL_EXPORTER_OTLP_ENDPOINT at a local OTLP/HTTP receiver that discards the spans), against the same build without")
	fs.BoolVar(&c.render, "render", false, "also measure render (POST /v1/integration/prompts/{id}/render) of a chat prompt with one partial and an input schema, on the server on memstore, against read 3 on that server (goal: at most 1.5x its cost); with -before, on the earlier build too")
	fs.BoolVar(&c.subject, "subject", false, "also measure read 3 of a split of two versions with subject= (a new subject each request), against the same read without a subject, on the server on memstore (goal: at most 1.05x its cost)")
	fs.BoolVar(&c.openedUI, "opened-ui", false, "also measure the server on memstore after its web interface served a page (its templates then stay in memory)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./bench/load [flags]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	switch {
	case fs.NArg() > 0:
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	case c.duration < time.Second:
		return config{}, errors.New("-duration must be at least 1s")
	case c.connections < 1 || c.threads < 1 || c.threads > c.connections:
		return config{}, errors.New("-connections and -threads must be at least 1, threads at most connections")
	case c.rounds < 1:
		return config{}, errors.New("-rounds must be at least 1")
	}
	if c.pin && runtime.NumCPU() < 2 {
		fmt.Fprintln(stderr, "load: one CPU: not pinning")
		c.pin = false
	}
	return c, nil
}

// apiKey is the key the servers accept and wrk sends.
const apiKey = "load-0123456789abcdef0123456789abcdef0123456789abcdef"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	wrkVersion, err := checkWrk(cfg.wrk)
	if err != nil {
		return err
	}
	if cfg.pin {
		if err := checkTaskset(); err != nil {
			return err
		}
	}
	var perf string
	if cfg.cycles {
		var why string
		if perf, why = checkPerf(); perf == "" {
			fmt.Fprintf(stdout, "not counting cycles: %s; counting CPU time from /proc instead\n", why)
		}
	}
	tmp, err := os.MkdirTemp("", "prompts-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// Every helper must outlive the whole run, and no more than needed.
	targets := 2
	if cfg.dsn != "" {
		targets = 4
	}
	if cfg.before != "" {
		targets++
	}
	if cfg.traced {
		targets++
	}
	if cfg.render {
		targets++
	}
	if cfg.subject {
		targets += 2
	}
	lifetime := time.Duration(targets)*(cfg.warmup+time.Duration(cfg.rounds)*(cfg.duration+3*time.Second)) + 5*time.Minute
	procs := &processes{pin: cfg.pin, lifetime: lifetime}
	var dropSchema func()
	defer func() {
		procs.stopAll() // first: the sqlstore server uses the schema
		if dropSchema != nil {
			dropSchema()
		}
	}()

	server := cfg.server
	if server == "" {
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "building cmd/promptsd\n")
		if server, err = buildServer(ctx, root, tmp); err != nil {
			return err
		}
	}

	var list []*target

	// startSeeded starts the standalone server with args and makes the
	// prompt read 3 reads.
	startSeeded := func(name string, args []string) (*process, readResponse, error) {
		p, err := procs.startServer(ctx, name, server, args)
		if err != nil {
			return nil, readResponse{}, err
		}
		read, err := seed(ctx, p.base)
		if err != nil {
			return nil, readResponse{}, fmt.Errorf("seeding %s: %w", name, err)
		}
		return p, read, nil
	}
	mem, read, err := startSeeded("memstore", nil)
	if err != nil {
		return err
	}
	bodyFile, err := read.save(tmp)
	if err != nil {
		return err
	}
	bare, err := procs.startHelper(ctx, "bare", "bytes", "-body", bodyFile)
	if err != nil {
		return err
	}
	if err := sameResponse(ctx, bare.base+read.Path, read); err != nil {
		return fmt.Errorf("bare server: %w", err)
	}
	bareT := &target{name: "bare", url: bare.base + read.Path, proc: bare}
	memT := &target{name: "memstore", url: mem.base + read.Path, proc: mem, baseline: bareT, goal: 0.90}
	list = append(list, bareT, memT)
	// renderOn adds render on the server of read, right after it in the
	// rounds, so that the ratio of the two is what a render costs over a
	// read there.
	renderOn := func(read *target, name string) (*target, error) {
		rr, err := seedRender(ctx, read.proc.base)
		if err != nil {
			return nil, fmt.Errorf("seeding the render on %s: %w", read.proc.name, err)
		}
		script, err := rr.script(tmp, name)
		if err != nil {
			return nil, err
		}
		t := &target{name: name, url: read.proc.base + rr.Path, script: script, proc: read.proc, baseline: read, costGoal: 1.5}
		list = append(list, t)
		return t, nil
	}
	var renderT *target
	if cfg.render {
		if renderT, err = renderOn(memT, "memstore-render"); err != nil {
			return err
		}
	}
	if cfg.subject {
		// Read 3 of a split, without a subject (its first entry) and
		// with one: what the pick costs a read over HTTP.
		sr, err := seedSplit(ctx, mem.base)
		if err != nil {
			return fmt.Errorf("seeding the split on memstore: %w", err)
		}
		plain, err := sr.script(tmp, "memstore-split", false)
		if err != nil {
			return err
		}
		subjects, err := sr.script(tmp, "memstore-subject", true)
		if err != nil {
			return err
		}
		splitT := &target{name: "memstore-split", url: mem.base + sr.Path, script: plain, proc: mem, baseline: memT}
		list = append(list, splitT,
			&target{name: "memstore-subject", url: mem.base + sr.Path, script: subjects, proc: mem, baseline: splitT, costGoal: 1.05})
	}
	if cfg.before != "" {
		// The earlier build, measured the same way: the change is the
		// ratio of the two builds, which the host's noise moves far
		// less than the ratio of either to the bare server.
		p, err := procs.startServer(ctx, "memstore-before", cfg.before, nil)
		if err != nil {
			return err
		}
		beforeRead, err := seed(ctx, p.base)
		if err != nil {
			return fmt.Errorf("seeding memstore-before: %w", err)
		}
		beforeT := &target{name: "memstore-before", url: p.base + beforeRead.Path, proc: p, baseline: bareT}
		memT.baseline, memT.goal = beforeT, 0.95
		list = append(list, beforeT)
		if cfg.render {
			// The earlier build's render too, in the same rounds: its
			// cost over its own read 3, and this build's render against
			// its render.
			beforeRender, err := renderOn(beforeT, "memstore-before-render")
			if err != nil {
				return err
			}
			renderT.versus = beforeRender
		}
	}
	if cfg.traced {
		// The same build with tracing on, exporting every span (the
		// default sampler) to a receiver on this host: what tracing
		// costs read 3, as a ratio to the build without it.
		sink, err := procs.startHelper(ctx, "otlp-sink", "otlp")
		if err != nil {
			return err
		}
		traced, tracedRead, err := func() (*process, readResponse, error) {
			// The harness's own OTEL_ variables (a sampler, say) go to
			// this server, but for the endpoints.
			env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.base}
			for _, kv := range os.Environ() {
				if strings.HasPrefix(kv, "OTEL_") && !strings.Contains(strings.SplitN(kv, "=", 2)[0], "ENDPOINT") {
					env = append(env, kv)
				}
			}
			p, err := procs.startServer(ctx, "memstore-traced", server, nil, env...)
			if err != nil {
				return nil, readResponse{}, err
			}
			read, err := seed(ctx, p.base)
			return p, read, err
		}()
		if err != nil {
			return fmt.Errorf("memstore-traced: %w", err)
		}
		list = append(list, &target{name: "memstore-traced", url: traced.base + tracedRead.Path, proc: traced, baseline: memT})
	}
	if cfg.openedUI {
		// The same server once someone opened its web interface: the
		// first page parses the UI's templates, which every garbage
		// collection marks from then on.
		withUI, uiRead, err := startSeeded("memstore-ui", nil)
		if err != nil {
			return err
		}
		if err := openUI(ctx, withUI.base); err != nil {
			return err
		}
		list = append(list, &target{name: "memstore-ui", url: withUI.base + uiRead.Path, proc: withUI, baseline: bareT})
	}

	if cfg.dsn != "" {
		schema, drop, err := newSchema(ctx, cfg.dsn)
		if err != nil {
			return err
		}
		dropSchema = drop
		sqlSrv, sqlRead, err := startSeeded("sqlstore", []string{"-dsn", cfg.dsn, "-schema", schema})
		if err != nil {
			return err
		}
		bareSQL, err := procs.startHelper(ctx, "bare-sql", "sql", "-dsn", cfg.dsn, "-schema", schema)
		if err != nil {
			return err
		}
		if err := sameResponse(ctx, bareSQL.base+sqlRead.Path, sqlRead); err != nil {
			return fmt.Errorf("bare-sql handler: %w", err)
		}
		bareSQLT := &target{name: "bare-sql", url: bareSQL.base + sqlRead.Path, proc: bareSQL}
		// The server on PostgreSQL caches by default: measured against
		// the bare server, as memstore is; without its cache, against the
		// bare handler that reads PostgreSQL.
		noCache, err := procs.startServer(ctx, "sqlstore-nocache", server, []string{"-dsn", cfg.dsn, "-schema", schema, "-cache=false"})
		if err != nil {
			return err
		}
		list = append(list,
			&target{name: "sqlstore", url: sqlSrv.base + sqlRead.Path, proc: sqlSrv, baseline: bareT, goal: 0.85},
			bareSQLT,
			&target{name: "sqlstore-nocache", url: noCache.base + sqlRead.Path, proc: noCache, baseline: bareSQLT, goal: 0.9})
	}

	w := wrk{cmd: cfg.wrk, threads: cfg.threads, connections: cfg.connections, pin: cfg.pin}
	placement := "not pinned"
	if cfg.pin {
		placement = fmt.Sprintf("servers pinned to CPUs %s, wrk to CPU %d", serverCPUs(), lastCPU())
	}
	fmt.Fprintf(stdout, "%d CPUs (%s), %s; %s -t%d -c%d -d%s, %d rounds\n",
		runtime.NumCPU(), cpuModel(), placement, wrkVersion, cfg.threads, cfg.connections, cfg.duration, cfg.rounds)
	fmt.Fprintf(stdout, "read 3: GET %s (%d-byte body)\n", read.Path, len(read.Body))
	counter := func(t *target) *cycleCounter {
		if !cfg.cycles || (perf == "" && runtime.GOOS != "linux") {
			return nil
		}
		// Where perf counts no cycles, the CPU time from /proc.
		return &cycleCounter{perf: perf, pid: t.proc.cmd.Process.Pid}
	}
	if cfg.warmup > 0 {
		for _, t := range list {
			if _, err := w.run(ctx, t.url, t.script, cfg.warmup, nil); err != nil {
				return fmt.Errorf("warm-up of %s: %w", t.name, err)
			}
		}
	}
	for r := range cfg.rounds {
		order := slices.Clone(list)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		fmt.Fprintf(stdout, "round %d:", r+1)
		for _, t := range order {
			res, err := w.run(ctx, t.url, t.script, cfg.duration, counter(t))
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, t.name, err)
			}
			t.results = append(t.results, res)
			fmt.Fprintf(stdout, "  %s %.0f/s", t.name, res.rps)
		}
		fmt.Fprintln(stdout)
	}
	unit := "cycles"
	if perf == "" {
		unit = "CPU-ns"
	}
	report(stdout, list, unit)
	return nil
}
