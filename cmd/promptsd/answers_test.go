package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
)

// -h names the flag, its unit and default, and what happens past it.
func TestServerHelpNamesTheAnswerMemory(t *testing.T) {
	is := is.New(t)
	cmd := exec.Command(os.Args[0], "-h")
	cmd.Env = append(os.Environ(), serverVar+"=1")
	out, err := cmd.CombinedOutput()
	is.NoErr(err)
	_, help, ok := strings.Cut(string(out), "-max-answer-memory MiB")
	is.True(ok) // the flag, in MiB
	help, _, _ = strings.Cut(help, "\n  -")
	is.True(strings.Contains(help, "503 with Retry-After")) // what happens past it
	is.True(strings.Contains(help, "(default 256)"))
}

// A -max-answer-memory below 1 MiB, or past what a byte count holds, stops
// the start with a message naming the flag and its range.
func TestServerRefusesABadAnswerMemory(t *testing.T) {
	for _, v := range []string{"0", "-1", "1048577"} {
		t.Run(v, func(t *testing.T) {
			is := is.New(t)
			// Killed after a while if it starts after all.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-addr", "127.0.0.1:0", "-data=", "-max-answer-memory", v)
			cmd.Env = append(os.Environ(), serverVar+"=1")
			out, err := cmd.CombinedOutput()
			is.True(err != nil) // the start stops
			is.True(strings.Contains(string(out), "-max-answer-memory must be between 1 and 1048576 (MiB)"))
			is.True(!strings.Contains(string(out), "msg=listening"))
		})
	}
}

// slowReader is a client that sent a GET and reads its answer only when
// told to: a connection with a small receive buffer, so that the server's
// writes soon wait for it.
type slowReader struct {
	conn net.Conn
	res  *http.Response
}

// openSlow GETs path with the server's key and reads the answer's head.
func (s *server) openSlow(t *testing.T, path string) *slowReader {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			// Before connecting, so that the window is small from the
			// start.
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 32<<10)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(s.root(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req, _ := http.NewRequest("GET", s.base+path, nil)
	req.Header.Set("X-API-Key", s.key)
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReaderSize(conn, 4<<10), req)
	if err != nil {
		t.Fatal(err)
	}
	return &slowReader{conn: conn, res: res}
}

// rest reads the rest of the answer, within a minute, into w.
func (r *slowReader) rest(w io.Writer) error {
	if err := r.conn.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		return err
	}
	_, err := io.Copy(w, r.res.Body)
	return err
}

// seedPrompts creates n prompts in the project, keys prefix0, prefix1…,
// each with a first version of size bytes of content active in
// production, over HTTP, and returns their ids.
func (s *server) seedPrompts(t *testing.T, projectID, prefix string, n, size int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		var p prompt
		if resp := s.call(t, "POST", "/prompts", fmt.Sprintf(`{"project_id":%q,"key":"%s%d","name":"N"}`, projectID, prefix, i), &p); resp.StatusCode != 200 {
			t.Fatalf("creating prompt %d: %d", i, resp.StatusCode)
		}
		content := strings.Repeat(strconv.Itoa(i%10), size)
		if resp := s.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"`+content+`","environments":["production"]}`, nil); resp.StatusCode != 200 {
			t.Fatalf("creating prompt %d's version: %d", i, resp.StatusCode)
		}
		ids[i] = p.ID
	}
	return ids
}

// firstProject returns the id of the server's one project.
func (s *server) firstProject(t *testing.T) string {
	t.Helper()
	var projects []project
	s.call(t, "GET", "/projects", "", &projects)
	if len(projects) != 1 {
		t.Fatalf("%d projects", len(projects))
	}
	return projects[0].ID
}

// -max-answer-memory reaches the API: with 1 MiB, slow readers of a
// 16 MiB snapshot, each waiting with a part of it (a prompt's, 66 KiB),
// hold the memory,
// and a read of a 512 KiB version is 503 with Retry-After while a change
// is still answered; once the readers are done, the read is served again.
// (With the default 256 MiB, 20 such readers hold 1.25 MiB, and the read
// is never refused.)
func TestServerMaxAnswerMemory(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-project", "P", "-max-answer-memory", "1", "-request-timeout", "2m")
	s.key = testKey
	projectID := s.firstProject(t)
	// Past what the kernel's buffers of a connection take (on Linux, the
	// last of net.ipv4.tcp_wmem, commonly 4 MiB, and the reader's 64 KiB),
	// so that each reader's answer waits for it.
	s.seedPrompts(t, projectID, "k", 256, 64<<10)
	big := s.seedPrompts(t, projectID, "big", 1, 512<<10)[0] // counted in the snapshot too
	snapshot, version := "/projects/"+projectID+"/snapshot", "/prompts/"+big+"/versions/1"

	var slow []*slowReader
	for range 20 {
		r := s.openSlow(t, snapshot)
		switch r.res.StatusCode {
		case 200:
			slow = append(slow, r)
		case 503: // the memory is held already
			is.Equal(r.res.Header.Get("Retry-After"), "1")
		default:
			t.Fatalf("a snapshot: %d", r.res.StatusCode)
		}
	}
	// 1 MiB is 15 parts of 66 KiB: a 16th is refused; 8 leave no room
	// for the version's 512 KiB.
	is.True(len(slow) >= 8)
	var refused *http.Response
	waitUntil(t, "a read refused while the readers wait", func() bool {
		resp := s.call(t, "GET", version, "", nil)
		if resp.StatusCode == 503 {
			refused = resp
			return true
		}
		is.Equal(resp.StatusCode, 200) // served while the readers start
		return false
	})
	is.Equal(refused.Header.Get("Retry-After"), "1")
	is.Equal(refused.Header.Get("Content-Type"), "application/problem+json")
	// A change is answered whatever: its client cannot tell whether a
	// refused change was made.
	resp := s.call(t, "POST", "/prompts/"+big+"/versions", `{"content":"`+strings.Repeat("u", 512<<10)+`"}`, nil)
	is.Equal(resp.StatusCode, 200)

	for _, r := range slow {
		is.NoErr(r.rest(io.Discard)) // the whole snapshot
	}
	waitUntil(t, "the read served once the readers were done", func() bool {
		return s.call(t, "GET", version, "", nil).StatusCode == 200
	})
}
