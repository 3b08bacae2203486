package httpapi_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/internal/wire"
)

// splitFixture is a prompt of the env's project with three versions,
// "one {{x}}", "two {{x}}" and "three {{x}}", none active.
type splitFixture struct {
	*env
	id, key string
	ids     []string // the versions' ids, by number - 1
}

func newSplitFixture(t *testing.T, e *env) splitFixture {
	t.Helper()
	p := e.newPrompt(e.project.ID)
	f := splitFixture{env: e, id: p["id"].(string), key: p["key"].(string)}
	for _, c := range []string{"one", "two", "three"} {
		f.ids = append(f.ids, e.newVersion(f.id, `{"content":"`+c+` {{x}}"}`)["id"].(string))
	}
	return f
}

func (f splitFixture) envPath(env string) string {
	return "/v1/integration/prompts/" + f.id + "/environments/" + env
}

// subjectFor returns a subject that the split serves the entry i.
func subjectFor(t *testing.T, promptID string, env prompts.Environment, split prompts.Split, i int) string {
	t.Helper()
	for n := range 10000 {
		s := "user-" + strconv.Itoa(n)
		if split.Entry(promptID, env, s) == i {
			return s
		}
	}
	t.Fatalf("no subject of 10000 falls in entry %d", i)
	return ""
}

// activeNumber is the version_number of a read's active_version.
func activeNumber(t *testing.T, r resp) string {
	t.Helper()
	return string(r.obj(t)["active_version"].(map[string]any)["version_number"].(json.Number))
}

// A split set over HTTP, read with and without a subject, through each
// of the three reads of a prompt in an environment: each answer is read
// 3's body of the version served plus the split, byte for byte the JSON
// of the store's own pick, with an ETag that names that version.
func TestSplitOverHTTP(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	f := newSplitFixture(t, e)
	ctx := context.Background()

	r := e.do("PUT", f.envPath("production"), `{"split":[{"version_number":1,"weight":90},{"version_id":"`+f.ids[2]+`","weight":10}],"reason":"try three"}`)
	is.Equal(r.status, 200) // set a split
	body := r.obj(t)
	is.Equal(keysOf(body), slicesWith(activePromptFields, "split")) // read 3's fields and the split
	is.Equal(body["split"], []any{
		map[string]any{"version_id": f.ids[0], "version_number": jsonNumber("1"), "weight": jsonNumber("90")},
		map[string]any{"version_id": f.ids[2], "version_number": jsonNumber("3"), "weight": jsonNumber("10")},
	}) // each entry with its version's id and number
	is.Equal(activeNumber(t, r), "1") // the first entry's version
	is.True(strings.HasSuffix(r.header.Get("ETag"), `-v1"`))
	putTag := r.header.Get("ETag")

	split := prompts.Split{{VersionID: f.ids[0], VersionNumber: 1, Weight: 90}, {VersionID: f.ids[2], VersionNumber: 3, Weight: 10}}
	subjects := []string{"", subjectFor(t, f.id, prompts.Production, split, 0), subjectFor(t, f.id, prompts.Production, split, 1)}
	wantNumbers := []string{"1", "1", "3"}
	for i, subject := range subjects {
		want, _, err := prompts.ReadActive(ctx, e.store, prompts.ActiveQuery{PromptID: f.id, Environment: prompts.Production, Subject: subject})
		is.NoErr(err)
		wantBody := string(api.AppendActive(nil, want))
		wantTag := string(wire.AppendETag(nil, want))
		q := ""
		if subject != "" {
			q = "subject=" + url.QueryEscape(subject)
		}
		for _, path := range []string{
			"/v1/integration/prompts/" + f.id + "?environment=production&" + q,
			"/v1/integration/projects/" + e.project.ID + "/prompts/" + f.key + "?" + q,
			f.envPath("production") + "?" + q,
		} {
			r := e.do("GET", path, "")
			is.Equal(r.status, 200)                                      // path
			is.Equal(string(r.body), wantBody)                           // the store's pick, as read 3 writes it (path)
			is.Equal(activeNumber(t, r), wantNumbers[i])                 // the version the split serves the subject (path)
			is.Equal(r.header.Get("ETag"), wantTag)                      // path
			is.True(strings.HasSuffix(wantTag, "-v"+wantNumbers[i]+`"`)) // naming the version served
		}
	}
	is.Equal(e.do("GET", "/v1/integration/prompts/"+f.id+"?environment=production", "").header.Get("ETag"), putTag) // PUT sent the tag of a read without subject

	// Staging holds no split: its answers are as before splits, the
	// subject changing nothing.
	is.Equal(e.do("PUT", f.envPath("staging"), `{"version_number":2}`).status, 200)
	plain := e.do("GET", "/v1/integration/prompts/"+f.id+"?environment=staging", "")
	is.Equal(keysOf(plain.obj(t)), activePromptFields) // no split member
	is.True(strongETag.MatchString(plain.header.Get("ETag")))
	withSubject := e.do("GET", "/v1/integration/prompts/"+f.id+"?environment=staging&subject="+subjects[2], "")
	is.Equal(string(withSubject.body), string(plain.body)) // the same bytes
	is.Equal(withSubject.header.Get("ETag"), plain.header.Get("ETag"))
}

// slicesWith returns a sorted copy of fields with more.
func slicesWith(fields []string, more ...string) []string {
	return sortedFields(append(append([]string{}, fields...), more...)...)
}

// Each version of a split has its own tag: If-None-Match answers 304 for
// the version it names only, the answers kept by tag never answer one
// version's read with another's bytes, and If-Match takes a split's tag.
func TestSplitETagPerVersion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup setup
	}{
		{"over the store", setup{}},
		{"over a cache", setup{store: func(s prompts.Store) prompts.Store { return cache.New(s, cache.Standalone()) }}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := newEnvWith(t, tc.setup)
			f := newSplitFixture(t, e)
			is.Equal(e.do("PUT", f.envPath("production"), `{"split":[{"version_number":1,"weight":1},{"version_number":2,"weight":1}]}`).status, 200)
			split := prompts.Split{{VersionID: f.ids[0], VersionNumber: 1, Weight: 1}, {VersionID: f.ids[1], VersionNumber: 2, Weight: 1}}
			first, second := subjectFor(t, f.id, prompts.Production, split, 0), subjectFor(t, f.id, prompts.Production, split, 1)
			read := func(subject string, hdr ...string) resp {
				return e.do("GET", "/v1/integration/prompts/"+f.id+"?environment=production&subject="+subject, "", hdr...)
			}

			r1 := read(first)
			is.Equal(activeNumber(t, r1), "1")
			r2 := read(second)                                                        // just after the first's bytes were kept
			is.Equal(activeNumber(t, r2), "2")                                        // its own version's bytes, not the kept ones
			is.True(strings.Contains(string(r2.body), `"content":"two {{x}}"`))       // (the content too)
			is.True(r1.header.Get("ETag") != r2.header.Get("ETag"))                   // a tag per version
			is.Equal(string(read(first).body), string(r1.body))                       // each read again as it was
			is.Equal(read(first, "If-None-Match", r1.header.Get("ETag")).status, 304) // the version it holds: current
			r := read(second, "If-None-Match", r1.header.Get("ETag"))
			is.Equal(r.status, 200) // another version: the body
			is.Equal(activeNumber(t, r), "2")
			is.Equal(read(second, "If-None-Match", r1.header.Get("ETag")+", "+r2.header.Get("ETag")).status, 304)

			// A change moves every version's tag on; a split's tag swaps.
			r = e.do("PUT", f.envPath("production"), `{"version_number":3}`, "If-Match", r2.header.Get("ETag"))
			is.Equal(r.status, 200)                               // If-Match with the tag of the second version
			is.True(strongETag.MatchString(r.header.Get("ETag"))) // one version again: a plain tag
			r = e.do("PUT", f.envPath("production"), `{"version_number":1}`, "If-Match", r1.header.Get("ETag"))
			is.Equal(r.status, 412) // a tag from before the change
			is.Equal(read(first, "If-None-Match", r1.header.Get("ETag")).status, 200)
		})
	}
}

// Bad splits are 400 naming the field (404 for a version the prompt does
// not have), and change nothing.
func TestSplitRefused(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	f := newSplitFixture(t, e)
	is.Equal(e.do("PUT", f.envPath("production"), `{"version_number":2}`).status, 200)
	before := e.do("GET", f.envPath("production"), "")
	history := string(e.do("GET", "/v1/integration/prompts/"+f.id+"/deployments", "").body)
	entries := func(n int) string {
		var b []string
		for i := range n {
			b = append(b, `{"version_number":`+strconv.Itoa(i+1)+`,"weight":1}`)
		}
		return `{"split":[` + strings.Join(b, ",") + `]}`
	}
	for _, tc := range []struct {
		name, body string
		status     int
		fields     []string
	}{
		{"one entry", entries(1), 400, []string{"split"}},
		{"eleven entries", entries(11), 400, []string{"split"}},
		{"a weight of 0", `{"split":[{"version_number":1,"weight":1},{"version_number":2,"weight":0}]}`, 400, []string{"split[1].weight"}},
		{"a weight past 10000", `{"split":[{"version_number":1,"weight":10001},{"version_number":2,"weight":1}]}`, 400, []string{"split[0].weight"}},
		{"no weight", `{"split":[{"version_number":1},{"version_number":2,"weight":1}]}`, 400, []string{"split[0].weight"}},
		{"a weight not an integer", `{"split":[{"version_number":1,"weight":0.5},{"version_number":2,"weight":1}]}`, 400, []string{"split[0].weight"}},
		{"a version twice", `{"split":[{"version_number":1,"weight":1},{"version_number":1,"weight":1}]}`, 400, []string{"split[1].version_number"}},
		{"a version twice, by id and by number", `{"split":[{"version_id":"` + f.ids[0] + `","weight":1},{"version_number":1,"weight":1}]}`, 400, []string{"split[1].version_number"}},
		{"an entry naming no version", `{"split":[{"weight":1},{"version_number":1,"weight":1}]}`, 400, []string{"split[0].version_id"}},
		{"an entry with a null version number", `{"split":[{"version_number":null,"weight":1},{"version_number":1,"weight":1}]}`, 400, []string{"split[0].version_id"}},
		{"a version number of 0", `{"split":[{"version_number":1,"weight":1},{"version_number":0,"weight":1}]}`, 400, []string{"split[1].version_number"}},
		{"a negative version number", `{"split":[{"version_number":1,"weight":1},{"version_number":-1,"weight":1}]}`, 400, []string{"split[1].version_number"}},
		{"an entry naming two", `{"split":[{"version_id":"` + f.ids[0] + `","version_number":1,"weight":1},{"version_number":2,"weight":1}]}`, 400, []string{"split[0].version_id"}},
		{"an entry with an unknown member", `{"split":[{"version":1,"weight":1},{"version_number":2,"weight":1}]}`, 400, []string{"split[0].version"}},
		{"a split with version_number", `{"version_number":1,"split":[{"version_number":1,"weight":1},{"version_number":2,"weight":1}]}`, 400, []string{"split"}},
		{"a split with version_id", `{"version_id":"` + f.ids[0] + `","split":[{"version_number":1,"weight":1},{"version_number":2,"weight":1}]}`, 400, []string{"split"}},
		{"not an array", `{"split":{"1":90}}`, 400, []string{"split"}},
		{"an unknown version", `{"split":[{"version_number":1,"weight":1},{"version_number":9,"weight":1}]}`, 404, nil},
		{"an unknown version id", `{"split":[{"version_number":1,"weight":1},{"version_id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","weight":1}]}`, 404, nil},
	} {
		r := e.do("PUT", f.envPath("production"), tc.body)
		is.Equal(r.status, tc.status) // tc.name
		if tc.fields != nil {
			is.Equal(fieldsOf(t, r), tc.fields) // tc.name
		}
		after := e.do("GET", f.envPath("production"), "")
		is.Equal(string(after.body), string(before.body))                                               // nothing changed (tc.name)
		is.Equal(after.header.Get("ETag"), before.header.Get("ETag"))                                   // tc.name
		is.Equal(string(e.do("GET", "/v1/integration/prompts/"+f.id+"/deployments", "").body), history) // no record (tc.name)
	}

	for _, path := range []string{
		"/v1/integration/prompts/" + f.id + "?subject=",
		"/v1/integration/projects/" + e.project.ID + "/prompts/" + f.key + "?subject=",
		f.envPath("production") + "?subject=",
		"/v1/integration/prompts/" + f.id + "?subject=a&subject=b",
		"/v1/integration/prompts/" + f.id + "?subject=%zz",
	} {
		r := e.do("GET", path, "")
		is.Equal(r.status, 400)                       // an empty, repeated or badly escaped subject (path)
		is.Equal(fieldsOf(t, r), []string{"subject"}) // path
		if strings.HasSuffix(path, "?subject=") {
			is.Equal(r.problem(t)["detail"], "invalid input: subject "+emptySubject) // path
		}
	}
}

// emptySubject is the detail of a subject given empty, in a read or a
// render.
const emptySubject = "must not be empty: omit it to be served the split's first entry"

// The details of an activation naming no version, and of a split entry
// whose version_number is given as 0, say what is wrong with the field
// named: a number given out of range is not a number left out.
func TestActivationDetails(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	f := newSplitFixture(t, e)
	for _, tc := range []struct{ body, detail string }{
		{`{}`, "invalid input: version_id or version_number or split is required: give one of the three"},
		{`{"split":[{"version_number":1,"weight":1},{"version_number":0,"weight":1}]}`, "invalid input: split[1].version_number must be 1 to 2147483647"},
		{`{"split":[{"version_number":1,"weight":1},{"version_number":-1,"weight":1}]}`, "invalid input: split[1].version_number must be 1 to 2147483647"},
	} {
		r := e.do("PUT", f.envPath("production"), tc.body)
		is.Equal(r.status, 400)                     // tc.body
		is.Equal(r.problem(t)["detail"], tc.detail) // tc.body
	}
}

// The records of splits and the events of their changes carry split and
// previous_split; rollback restores a split.
func TestSplitRecordsAndEvents(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	f := newSplitFixture(t, e)
	is.Equal(e.do("PUT", f.envPath("production"), `{"version_number":3}`).status, 200)
	is.Equal(e.do("PUT", f.envPath("production"), `{"split":[{"version_number":1,"weight":70},{"version_number":2,"weight":30}]}`).status, 200)
	is.Equal(e.do("PUT", f.envPath("production"), `{"version_number":3}`).status, 200)
	r := e.do("POST", f.envPath("production")+"/rollback", "")
	is.Equal(r.status, 200) // back to the split
	is.Equal(len(r.obj(t)["split"].([]any)), 2)
	is.Equal(activeNumber(t, r), "1")

	split := []any{
		map[string]any{"version_id": f.ids[0], "version_number": jsonNumber("1"), "weight": jsonNumber("70")},
		map[string]any{"version_id": f.ids[1], "version_number": jsonNumber("2"), "weight": jsonNumber("30")},
	}
	list := e.do("GET", "/v1/integration/prompts/"+f.id+"/deployments", "").arr(t)
	is.Equal(len(list), 4)
	rollback, activate, set, first := list[0], list[1], list[2], list[3]
	is.Equal(set["action"], "split")
	is.Equal(set["split"], split) // the split set
	is.Equal(set["version_number"], jsonNumber("1"))
	is.Equal(set["previous_version_number"], jsonNumber("3"))
	_, has := set["previous_split"]
	is.True(!has) // none before
	is.Equal(activate["action"], "activate")
	is.Equal(activate["previous_split"], split) // the split replaced
	_, has = activate["split"]
	is.True(!has)
	is.Equal(rollback["action"], "rollback")
	is.Equal(rollback["split"], split) // restored
	_, has = first["split"]
	_, hasPrev := first["previous_split"]
	is.True(!has && !hasPrev) // a record of no split: as before

	var events []map[string]any
	for _, ev := range e.do("GET", "/v1/integration/events", "").arr(t) {
		if ev["type"] == "deployment.created" && ev["prompt_id"] == f.id {
			events = append(events, ev["data"].(map[string]any))
		}
	}
	is.Equal(len(events), 4)
	is.Equal(events[1]["split"], split)          // the event of the split carries it
	is.Equal(events[2]["previous_split"], split) // and that of its replacement the split replaced
	is.Equal(events[3]["split"], split)          // and the rollback's
}

// A render with a subject renders the version the split serves it.
func TestRenderSubject(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	f := newSplitFixture(t, e)
	is.Equal(e.do("PUT", f.envPath("production"), `{"split":[{"version_number":1,"weight":1},{"version_number":2,"weight":1}]}`).status, 200)
	split := prompts.Split{{VersionID: f.ids[0], VersionNumber: 1, Weight: 1}, {VersionID: f.ids[1], VersionNumber: 2, Weight: 1}}
	render := func(body string) map[string]any {
		r := e.do("POST", "/v1/integration/prompts/"+f.id+"/render", body)
		is.Equal(r.status, 200)
		return r.obj(t)
	}
	out := render(`{"variables":{"x":"X"},"subject":"` + subjectFor(t, f.id, prompts.Production, split, 1) + `"}`)
	is.Equal(out["text"], "two X") // the version the split serves the subject
	is.Equal(out["version_number"], jsonNumber("2"))
	is.Equal(render(`{"variables":{"x":"X"},"subject":"` + subjectFor(t, f.id, prompts.Production, split, 0) + `"}`)["text"], "one X")
	is.Equal(render(`{"variables":{"x":"X"}}`)["text"], "one X")                // no subject: the first entry's
	is.Equal(render(`{"variables":{"x":"X"},"subject":null}`)["text"], "one X") // null: none
	r := e.do("POST", "/v1/integration/prompts/"+f.id+"/render", `{"variables":{"x":"X"},"subject":7}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"subject"})

	// Given empty, refused as the reads refuse it: the interface hashes
	// no empty subject.
	r = e.do("POST", "/v1/integration/prompts/"+f.id+"/render", `{"variables":{"x":"X"},"subject":""}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"subject"})
	is.Equal(r.problem(t)["detail"], "invalid input: subject "+emptySubject)
}

// A snapshot carries each split with its versions whole; a cache falling
// back on it picks as the server does.
func TestSnapshotSplit(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	f := newSplitFixture(t, e)
	plain := newSplitFixture(t, e)
	is.Equal(e.do("PUT", f.envPath("staging"), `{"split":[{"version_number":3,"weight":5},{"version_number":1,"weight":5}]}`).status, 200)
	is.Equal(e.do("PUT", plain.envPath("production"), `{"version_number":1}`).status, 200)

	r := e.do("GET", "/v1/integration/projects/"+e.project.ID+"/snapshot", "")
	is.Equal(r.status, 200) // checked against the Snapshot schema by the test client
	items := r.obj(t)["prompts"].([]any)
	item := items[0].(map[string]any)
	is.Equal(keysOf(item), []string{"environments", "prompt", "revision", "splits"})
	shares := item["splits"].(map[string]any)["staging"].([]any)
	is.Equal(len(shares), 2)
	is.Equal(shares[0].(map[string]any)["weight"], jsonNumber("5"))
	is.Equal(shares[0].(map[string]any)["version"], jsonOf(t, e.do("GET", "/v1/integration/prompts/"+f.id+"/versions/3", "").body)) // whole, as readVersion has it
	is.Equal(item["environments"].(map[string]any)["staging"], shares[0].(map[string]any)["version"])                               // the first entry's in environments
	is.Equal(keysOf(items[1].(map[string]any)), []string{"environments", "prompt", "revision"})                                     // no split: as before

	s, err := cache.ParseSnapshot(r.body)
	is.NoErr(err)
	ctx := context.Background()
	want, err := e.store.GetActive(ctx, f.id, prompts.Staging)
	is.NoErr(err)
	is.Equal(s.Prompts[0].ActiveIn(prompts.Staging), want) // as the store answers it
	for _, subject := range []string{"a", "b", "c", "d"} {
		got := s.Prompts[0].ActiveIn(prompts.Staging).Pick(subject)
		w, _, err := prompts.ReadActive(ctx, e.store, prompts.ActiveQuery{PromptID: f.id, Environment: prompts.Staging, Subject: subject})
		is.NoErr(err)
		is.Equal(got.ActiveVersion.ID, w.ActiveVersion.ID) // picked alike
	}
}

// If-Match compares the revision a tag names, whatever version it names
// after it (-vN, a version of the split or not) or none: at the current
// revision each swaps, as openapi.yaml says.
func TestIfMatchComparesTheRevision(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	f := newSplitFixture(t, e)
	split := func(w int) string {
		return `{"split":[{"version_number":1,"weight":` + strconv.Itoa(w) + `},{"version_number":2,"weight":1}]}`
	}
	is.Equal(e.do("PUT", f.envPath("production"), split(1)).status, 200)
	for i, suffix := range []string{"", "-v1", "-v2", "-v3", "-v99"} {
		tag := e.do("GET", f.envPath("production"), "").header.Get("ETag")
		is.True(strings.HasSuffix(tag, `-v1"`)) // a read without a subject: the first entry's
		current := strings.TrimSuffix(tag, `-v1"`) + suffix + `"`
		r := e.do("PUT", f.envPath("production"), split(i+2), "If-Match", current)
		is.Equal(r.status, 200) // the current revision swaps (suffix)
		r = e.do("PUT", f.envPath("production"), split(i+20), "If-Match", current)
		is.Equal(r.status, 412) // that revision is gone now (suffix)
	}
}
