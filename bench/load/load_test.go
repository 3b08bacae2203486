package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// wrkOutput is what wrk 4.1 prints with --latency.
const wrkOutput = `Running 3s test @ http://127.0.0.1:40123/v1/integration/prompts/01KAKM6N8V5X3ZJ0W2Q9R7T4YB
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   210.43us  151.20us   6.03ms   97.71%
    Req/Sec    76.12k     3.05k   80.61k    83.33%
  Latency Distribution
     50%  196.00us
     75%  221.00us
     90%  250.00us
     99%    1.02ms
  227275 requests in 3.00s, 286.59MB read
Requests/sec:  75752.74
Transfer/sec:     95.52MB
`

func TestParseWrk(t *testing.T) {
	is := is.New(t)
	r, err := parseWrk(wrkOutput)
	is.NoErr(err)                          // parsed
	is.Equal(r.rps, 75752.74)              // requests/s
	is.Equal(r.p50, 196*time.Microsecond)  // p50
	is.Equal(r.p99, 1020*time.Microsecond) // p99
	is.Equal(r.requests, int64(227275))    // requests

	_, err = parseWrk(wrkOutput + "  Non-2xx or 3xx responses: 12\n")
	is.True(err != nil) // a response that is not 2xx or 3xx fails the run

	_, err = parseWrk(wrkOutput + "  Socket errors: connect 0, read 0, write 0, timeout 3\n")
	is.NoErr(err) // timeouts show in the latency

	_, err = parseWrk(wrkOutput + "  Socket errors: connect 2, read 0, write 0, timeout 0\n")
	is.True(err != nil) // other socket errors fail the run

	_, err = parseWrk("Running 3s test @ http://127.0.0.1:1/\n")
	is.True(err != nil) // no figures
}

func TestParseLatency(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]time.Duration{
		"812.00us": 812 * time.Microsecond,
		"1.50ms":   1500 * time.Microsecond,
		"2.00s":    2 * time.Second,
		"1.00m":    time.Minute,
	} {
		got, err := parseLatency(in)
		is.NoErr(err)       // parsed
		is.Equal(got, want) // the duration
	}
	_, err := parseLatency("3.0h")
	is.True(err != nil) // an unknown unit
}

func TestParseCycles(t *testing.T) {
	is := is.New(t)
	c, err := parseCycles("5781780702,,cycles,2477101234,100.00,,\n")
	is.NoErr(err)                    // parsed
	is.Equal(c, float64(5781780702)) // the count
	_, err = parseCycles("<not counted>,,cycles,0,100.00,,\n")
	is.True(err != nil) // nothing counted
}

func TestMedian(t *testing.T) {
	is := is.New(t)
	is.Equal(median([]float64{3, 1, 2}), 2.0)    // odd
	is.Equal(median([]float64{4, 1, 3, 2}), 2.5) // even: the mean of the middle two
	is.Equal(median(nil), 0.0)                   // none
}

func TestLuaString(t *testing.T) {
	is := is.New(t)
	is.Equal(luaString(`{"a":"b\\c"}`), `"{\034a\034:\034b\092\092c\034}"`) // quotes and backslashes escaped
	is.Equal(luaString("é\n"), `"\195\169\010"`)                            // bytes outside printable ASCII escaped
}

func TestCosts(t *testing.T) {
	is := is.New(t)
	read := &target{results: []result{{rps: 1000}, {rps: 800}}}
	render := &target{baseline: read, results: []result{{rps: 500}, {rps: 800}}}
	is.Equal(render.costs(), []float64{2, 1}) // the baseline's req/s over the target's
	before := &target{results: []result{{rps: 250}, {rps: 1000}}}
	is.Equal(render.against(before, rps), []float64{2, 0.8}) // round by round, the target's over the other's
}

func TestSplitScript(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	sr := splitRequest{Path: "/v1/integration/prompts/01KAKM6N8V5X3ZJ0W2Q9R7T4YB"}
	name, err := sr.script(dir, "memstore-subject", true)
	is.NoErr(err)
	b, err := os.ReadFile(name)
	is.NoErr(err)
	is.True(strings.Contains(string(b), `"?subject=user-" .. n`)) // a subject each request
	is.True(strings.Contains(string(b), "n % 100000 + 1"))        // cycling through the subjects, from user-1
	name, err = sr.script(dir, "memstore-split", false)
	is.NoErr(err)
	b, err = os.ReadFile(name)
	is.NoErr(err)
	is.True(!strings.Contains(string(b), "subject")) // the same read each request
	is.True(strings.Contains(string(b), `wrk.format("GET", path)`))
}
