package main

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// raceEnabled tells whether the race detector runs (race_test.go).
var raceEnabled bool

// vmRSS returns the resident memory of process pid, in bytes: field
// VmRSS (now) or VmHWM (the most so far) of its status.
func vmRSS(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// 32 slow readers of a large snapshot, each stopped after its first
// bytes, leave the server's resident memory far under 32 snapshots: it
// writes a snapshot as it reads it, 64 KiB at a time. Then each reads the
// rest: the whole snapshot, the same for all.
//
// A server that held each answer whole would hold 32 snapshots: with
// the figures of the promise (32 readers of 64 MB, under 512 MB
// resident), 2 GB. Here the snapshot is 16 MiB and the bound a quarter,
// 128 MiB, so that the test seeds in seconds on a small shared machine,
// and a server that holds the answers whole fails it using under 1 GiB
// (measured: 980 MiB; this one 70 MiB). The race detector's shadow
// memory counts as resident: under it, the bound is 512 MiB (measured:
// 190 MiB; a server that holds the answers whole, 2 GiB).
func TestServerSlowSnapshotReadersHoldLittle(t *testing.T) {
	is := is.New(t)
	const (
		promptSize = 64 << 10
		nPrompts   = 256 // 16 MiB
		readers    = 32
	)
	bound := int64(128 << 20)
	if raceEnabled {
		bound *= 4
	}
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-project", "P", "-request-timeout", "5m")
	s.key = testKey
	projectID := s.firstProject(t)
	s.seedPrompts(t, projectID, "k", nPrompts, promptSize)
	pid := s.cmd.Process.Pid
	before := vmRSS(t, pid, "VmRSS")

	slow := make([]*slowReader, readers)
	heads := make([][]byte, readers)
	for i := range slow {
		slow[i] = s.openSlow(t, "/projects/"+projectID+"/snapshot")
		is.Equal(slow[i].res.StatusCode, 200)
		heads[i] = make([]byte, 1<<10)
		_, err := io.ReadFull(slow[i].res.Body, heads[i])
		is.NoErr(err) // its first bytes
	}
	held := vmRSS(t, pid, "VmRSS")
	t.Logf("the server's resident memory: %d MiB once seeded, %d MiB with %d readers of a %d MiB snapshot waiting", before>>20, held>>20, readers, nPrompts*promptSize>>20)
	is.True(held < bound) // not 32 snapshots

	// The first reader's snapshot is parsed; each other's is the same
	// bytes but for the time it was taken at (nothing changed meanwhile),
	// which a checksum tells faster than parsing 31 more.
	var rest bytes.Buffer
	is.NoErr(slow[0].rest(&rest))
	snap, err := cache.ParseSnapshot(append(heads[0], rest.Bytes()...))
	is.NoErr(err) // a valid snapshot
	is.Equal(len(snap.Prompts), nPrompts)
	for _, p := range snap.Prompts {
		v := p.Active[prompts.Production]
		is.True(v != nil)
		is.Equal(len(v.Content), promptSize) // each prompt whole
	}
	want, size := sumWithoutTime(t, heads[0], &rest)
	for i, r := range slow[1:] {
		is.NoErr(r.conn.SetReadDeadline(time.Now().Add(time.Minute)))
		got, n := sumWithoutTime(t, heads[i+1], r.res.Body)
		is.Equal(n, size)   // reader i+1's snapshot, whole
		is.Equal(got, want) // the same
	}
	peak := vmRSS(t, pid, "VmHWM")
	t.Logf("the server's resident memory at most: %d MiB", peak>>20)
	is.True(peak < bound) // all along, seeding and reading included
}

// sumWithoutTime returns a checksum and the length of a snapshot, head
// then what rest reads, less the value of its taken_at (in head).
func sumWithoutTime(t *testing.T, head []byte, rest io.Reader) (uint32, int64) {
	t.Helper()
	const name = `"taken_at":"`
	at := bytes.Index(head, []byte(name))
	if at < 0 {
		t.Fatalf("no taken_at in the snapshot's first bytes: %q", head)
	}
	at += len(name)
	end := at + bytes.IndexByte(head[at:], '"')
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	h.Write(head[:at])
	h.Write(head[end:])
	n, err := io.Copy(h, rest)
	if err != nil {
		t.Fatal(err)
	}
	return h.Sum32(), int64(len(head)-(end-at)) + n
}
