package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"
)

// Without -dsn the server keeps its data in a file: a restart finds it,
// and a second server on the same file is refused.
func TestServerKeepsDataInAFile(t *testing.T) {
	is := is.New(t)
	data := filepath.Join(t.TempDir(), "prompts.data")
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-data", data)
	s.key = testKey
	s.logLine(t, "msg=\"data file\"", "path="+data)
	p := s.newPrompt(t)
	is.Equal(s.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"kept","environments":["production"]}`, nil).StatusCode, 200)

	second := launch(t, []string{"PROMPTS_API_KEY=" + testKey}, "-data", data)
	err := <-second.done
	var exit *exec.ExitError
	is.True(errors.As(err, &exit))
	is.Equal(exit.ExitCode(), 1)
	second.logLine(t, "msg=exiting", "status=1", "in use")

	is.NoErr(s.stop(t))
	s = start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-data", data)
	s.key = testKey
	var got prompt
	is.Equal(s.call(t, "GET", "/prompts/"+p.ID, "", &got).StatusCode, 200)
	is.Equal(got.ActiveVersion.Content, "kept") // still there
	var projects []project
	s.call(t, "GET", "/projects", "", &projects)
	is.Equal(len(projects), 1) // Demo, not made twice
	is.NoErr(s.stop(t))
}

// A server killed (SIGKILL) while 8 writers create versions loses none
// that it acknowledged: started again on its file, it has every one, with
// its number and id, and the numbers have no gap.
func TestServerKilledMidWrite(t *testing.T) {
	is := is.New(t)
	data := filepath.Join(t.TempDir(), "prompts.data")
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-data", data)
	s.key = testKey
	p := s.newPrompt(t)

	var (
		mu    sync.Mutex
		acked = map[int]string{} // version number -> id
		count atomic.Int32
		wg    sync.WaitGroup
	)
	client := &http.Client{}
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				req, _ := http.NewRequest("POST", s.base+"/prompts/"+p.ID+"/versions", strings.NewReader(fmt.Sprintf(`{"content":"writer %d, %d"}`, w, i)))
				req.Header.Set("X-API-Key", testKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					return // the server is gone
				}
				var v struct {
					ID            string `json:"id"`
					VersionNumber int    `json:"version_number"`
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || json.Unmarshal(body, &v) != nil {
					return // cut mid-answer: not acknowledged
				}
				mu.Lock()
				acked[v.VersionNumber] = v.ID
				mu.Unlock()
				count.Add(1)
			}
		})
	}
	waitFor(t, "200 acknowledged writes", func() bool { return count.Load() >= 200 })
	is.NoErr(s.cmd.Process.Kill()) // SIGKILL, mid-write
	<-s.done
	wg.Wait()

	s = start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-data", data)
	s.key = testKey
	got := s.versionsOf(t, p.ID)
	mu.Lock()
	defer mu.Unlock()
	for n, id := range acked {
		if got[n] != id {
			t.Errorf("acknowledged version %d (%s) lost: %q after the restart", n, id, got[n])
		}
	}
	is.True(len(got) >= len(acked))
	t.Logf("%d acknowledged, %d on disk", len(acked), len(got))
	is.NoErr(s.stop(t))
}

// versionsOf reads every version of a prompt, page by page, and returns
// their ids by number; it fails the test when the numbers have a gap.
func (s *server) versionsOf(t *testing.T, promptID string) map[int]string {
	t.Helper()
	got := map[int]string{}
	for after := ""; ; {
		var page []struct {
			ID            string `json:"id"`
			VersionNumber int    `json:"version_number"`
		}
		q := "?limit=1000"
		if after != "" {
			q += "&after=" + after
		}
		resp := s.call(t, "GET", "/prompts/"+promptID+"/versions"+q, "", &page)
		if resp.StatusCode != 200 {
			t.Fatalf("list versions: %d", resp.StatusCode)
		}
		for _, v := range page {
			got[v.VersionNumber] = v.ID
		}
		if resp.Header.Get("Link") == "" || len(page) == 0 {
			break
		}
		after = page[len(page)-1].ID
	}
	for n := 1; n <= len(got); n++ {
		if _, ok := got[n]; !ok {
			t.Errorf("prompt %s: version %d is missing: the numbers have a gap", promptID, n)
		}
	}
	return got
}

// With a data file and no key, the first start generates a key, prints it
// with a sample curl line, and keeps its hash beside the data (mode 600);
// a restart accepts the same key without printing it, and says so.
func TestServerKeepsItsGeneratedKey(t *testing.T) {
	is := is.New(t)
	data := filepath.Join(t.TempDir(), "prompts.data")
	s := start(t, nil, "-data", data)
	is.True(s.key != "") // printed at the first start
	is.True(strings.Contains(s.out.String(), `Try: curl -H "X-API-Key: `+s.key+`" http://`))
	fi, err := os.Stat(data + ".key")
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600))
	kept, err := os.ReadFile(data + ".key")
	is.NoErr(err)
	is.True(!strings.Contains(string(kept), s.key)) // the hash, not the key
	key := s.key
	is.Equal(s.call(t, "GET", "/projects", "", nil).StatusCode, 200)
	is.NoErr(s.stop(t))

	s = start(t, nil, "-data", data)
	is.Equal(s.key, "")                                                        // not printed again
	is.True(!strings.Contains(s.out.String(), key))                            // anywhere
	s.logLine(t, "API key: the one printed at the first start")                // but said
	is.True(strings.Contains(s.out.String(), `"X-API-Key: $PROMPTS_API_KEY"`)) // the curl line without it, in quotes the shell expands
	s.key = key
	is.Equal(s.call(t, "GET", "/projects", "", nil).StatusCode, 200)
	s.key = "pk_another-key-of-enough-length"
	is.Equal(s.call(t, "GET", "/projects", "", nil).StatusCode, 401)
	is.NoErr(s.stop(t))

	// In memory only, a new key at every start.
	s = start(t, nil)
	is.True(s.key != "" && s.key != key)
	is.NoErr(s.stop(t))
}
