package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// moduleRoot returns the directory of the module the harness belongs to,
// which holds cmd/promptsd.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run the harness from inside the module: go run ./bench/load")
	}
	root := filepath.Dir(gomod)
	if _, err := os.Stat(filepath.Join(root, "cmd", "promptsd", "main.go")); err != nil {
		return "", fmt.Errorf("no cmd/promptsd in %s: run the harness from the prompts module", root)
	}
	return root, nil
}

// buildServer builds cmd/promptsd into dir and returns the binary.
func buildServer(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "promptsd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/promptsd")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/promptsd: %v\n%s", err, out)
	}
	return bin, nil
}

// processes are the servers of one run.
type processes struct {
	pin      bool          // on every CPU but the last
	lifetime time.Duration // the bare servers' own limit
	mu       sync.Mutex
	procs    []*process
}

// process is a running server.
type process struct {
	name  string
	cmd   *exec.Cmd
	base  string // http://127.0.0.1:port
	stdin io.Closer
	out   *syncBuffer
	done  chan struct{} // closed when it exited
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 1<<20 {
		return len(p), nil // keep the start, where the errors that matter are
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serverListening is the standalone server's log line once it is ready
// (it listens first, then opens its store).
var serverListening = regexp.MustCompile(`msg=ready addr=http://(127\.0\.0\.1:\d+)/`)

// startServer starts the standalone server with args on a free loopback
// port, and returns once it listens. Its environment has none of the
// PROMPTS_ and OTEL_ variables of this one: only args, and the variables
// of extraEnv, configure it.
func (ps *processes) startServer(ctx context.Context, name, bin string, args []string, extraEnv ...string) (*process, error) {
	// The server's defaults, as users run it (access log, metrics and
	// request ids on), but in memory without -dsn: the reads measured are
	// the same on a data file.
	args = append([]string{"-addr", "127.0.0.1:0", "-api-key", apiKey, "-data="}, args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PROMPTS_") && !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return ps.start(ctx, name, bin, args, append(env, extraEnv...), serverListening)
}

// helperListening is a helper's line on standard output once it listens.
var helperListening = regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)

// startHelper starts this command again as the bare server of the given
// kind, and returns once it listens.
func (ps *processes) startHelper(ctx context.Context, name, kind string, args ...string) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args = append([]string{helperArg, "-kind", kind, "-lifetime", ps.lifetime.String()}, args...)
	return ps.start(ctx, name, self, args, os.Environ(), helperListening)
}

func (ps *processes) start(ctx context.Context, name, bin string, args, env []string, listening *regexp.Regexp) (*process, error) {
	if ps.pin {
		args = append([]string{"-c", serverCPUs(), bin}, args...)
		bin = "taskset"
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	setDeathSignal(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	p := &process{name: name, cmd: cmd, stdin: stdin, out: &syncBuffer{}, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ps.mu.Lock()
	ps.procs = append(ps.procs, p)
	ps.mu.Unlock()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(p.out, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
				break
			}
		}
		// The rest (the access log, one line a request) is read as a
		// log collector reads it, and dropped: the harness would
		// otherwise hold every line in memory.
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		_ = cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	select {
	case a := <-addr:
		p.base = "http://" + a
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before listening:\n%s", name, p.out.String())
	case <-time.After(time.Minute):
		return nil, fmt.Errorf("%s did not listen within a minute:\n%s", name, p.out.String())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stopAll stops every process: SIGTERM, then SIGKILL after 5 seconds.
func (ps *processes) stopAll() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.procs {
		_ = p.stdin.Close()
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range ps.procs {
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	ps.procs = nil
}

// lastCPU returns the number of the last CPU, wrk's when pinned.
func lastCPU() int { return runtime.NumCPU() - 1 }

// serverCPUs returns the servers' CPUs when pinned, as taskset -c takes
// them: all but the last.
func serverCPUs() string {
	if lastCPU() == 1 {
		return "0"
	}
	return "0-" + strconv.Itoa(lastCPU()-1)
}

// checkTaskset checks that taskset, which -pin needs, is installed.
func checkTaskset() error {
	if _, err := exec.LookPath("taskset"); err != nil {
		return errors.New("pinning needs taskset (util-linux): apt-get install -y util-linux, or run with -pin=false")
	}
	return nil
}
