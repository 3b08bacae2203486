package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// subjectsOf returns, for each entry of split in env of the prompt, a
// subject the split serves that entry's version.
func subjectsOf(t *testing.T, promptID string, env prompts.Environment, split prompts.Split) []string {
	t.Helper()
	out := make([]string, len(split))
	found := 0
	for i := 0; found < len(split) && i < 10000; i++ {
		s := "user-" + strconv.Itoa(i)
		if e := split.Entry(promptID, env, s); out[e] == "" {
			out[e] = s
			found++
		}
	}
	if found < len(split) {
		t.Fatalf("no subject for every entry of %v", split)
	}
	return out
}

// promote -split sets a split; get and render read the version it serves
// a subject (-subject), its first entry's without one; promote, rollback
// and history show it with its shares.
func TestPromoteSplit(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	p := s.seed(t, "greeting", "G", nil, "", []string{"One {{name}}", "Two {{name}}", "Three {{name}}"}, map[prompts.Environment]int{prompts.Production: 1})

	r := cli(t, s, nil, "promote", "greeting", "-environment", "production", "-split", "2=90, 3=10", "-reason", "canary")
	is.Equal(r.stderr, "")
	is.Equal(r.code, 0)
	is.True(strings.Contains(r.stdout, "split 2 (90%), 3 (10%)")) // the shares
	is.True(strings.Contains(r.stdout, "was version 1"))
	a, err := s.store.GetActive(t.Context(), p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(len(a.Split), 2)
	is.Equal([]int{a.Split[0].VersionNumber, a.Split[0].Weight, a.Split[1].VersionNumber, a.Split[1].Weight}, []int{2, 90, 3, 10})
	d := s.deployments(t, "greeting")[0]
	is.Equal(d.Action, prompts.ActionSplit)
	is.Equal(*d.Reason, "canary")

	r = cli(t, s, nil, "promote", "greeting", "-environment", "production", "-split", "2=90,3=10", "-json")
	is.Equal(r.code, 0) // the same split: nothing to do
	var ans map[string]any
	is.NoErr(json.Unmarshal([]byte(r.stdout), &ans))
	is.Equal(ans["changed"], false)
	is.Equal(len(ans["split"].([]any)), 2)
	is.Equal(len(s.deployments(t, "greeting")), 2)

	// A subject gets the version the split serves it, as an application's
	// read does; without one, the first entry's.
	subjects := subjectsOf(t, p.ID, prompts.Production, a.Split)
	for i, want := range []string{"Two {{name}}", "Three {{name}}"} {
		r = cli(t, s, nil, "get", "greeting", "-environment", "production", "-subject", subjects[i])
		is.Equal(r.code, 0)
		is.Equal(r.stdout, want)
		is.True(strings.Contains(r.stderr, "version "+strconv.Itoa(i+2)+"  (production, split 2 (90%), 3 (10%), subject \""+subjects[i]+"\")"))
		r = cli(t, s, nil, "render", "greeting", "-subject", subjects[i], "-var", "name=Ann")
		is.Equal(r.code, 0)
		is.Equal(r.stdout, "[user]\n"+strings.Replace(want, "{{name}}", "Ann", 1)+"\n")
	}
	r = cli(t, s, nil, "get", "greeting")
	is.Equal(r.stdout, "Two {{name}}")
	is.True(strings.Contains(r.stderr, "no -subject: its first entry"))
	r = cli(t, s, nil, "get", "greeting", "-subject", subjects[1], "-json")
	is.Equal(r.code, 0)
	var got struct {
		Version int         `json:"version"`
		Subject string      `json:"subject"`
		Split   []api.Share `json:"split"`
	}
	is.NoErr(json.Unmarshal([]byte(r.stdout), &got))
	is.Equal(got.Version, 3)
	is.Equal(got.Subject, subjects[1])
	is.Equal(len(got.Split), 2)
	r = cli(t, s, nil, "get", "greeting", "-version", "1", "-subject", "ann")
	is.Equal(r.code, 1) // a subject picks in an environment only
	is.True(strings.Contains(r.stderr, "-subject"))
	for _, args := range [][]string{
		{"get", "greeting", "-subject", ""},
		{"get", "greeting", "-subject="},
		{"render", "greeting", "-subject", "", "-var", "name=Ann"},
	} {
		r = cli(t, s, nil, args...)
		is.Equal(r.code, 1) // an empty subject typed is refused, as over HTTP (args)
		is.True(strings.Contains(r.stderr, "-subject must not be empty: omit it to be served the split's first entry"))
		is.Equal(r.stdout, "")
	}

	// History shows the split and what it replaced.
	r = cli(t, s, nil, "history", "greeting")
	is.Equal(r.code, 0)
	lines := strings.Split(r.stdout, "\n")
	is.True(strings.HasPrefix(strings.Join(strings.Fields(lines[1])[3:], " "), "split 2 (90%), 3 (10%) 1 ci canary"))

	// Rolling back returns to version 1, and rolling back again to the
	// split.
	r = cli(t, s, nil, "rollback", "greeting", "-environment", "production")
	is.Equal(r.code, 0)
	is.True(strings.Contains(r.stdout, "version 1") && strings.Contains(r.stdout, "was split 2 (90%), 3 (10%)"))
	r = cli(t, s, nil, "rollback", "greeting", "-environment", "production", "-json")
	is.Equal(r.code, 0)
	ans = nil
	is.NoErr(json.Unmarshal([]byte(r.stdout), &ans))
	is.Equal(ans["version"], 2.0)
	is.Equal(len(ans["split"].([]any)), 2)
	r = cli(t, s, nil, "history", "greeting", "-limit", "1")
	lines = strings.Split(r.stdout, "\n")
	is.Equal(strings.Join(strings.Fields(lines[1])[2:], " "), "production rollback 2 (90%), 3 (10%) 1 ci -")
}

// A -split that is not VERSION=WEIGHT,… is refused naming what is wrong,
// and nothing is sent to the server; one the server refuses changes
// nothing.
func TestPromoteSplitRefused(t *testing.T) {
	var requests atomic.Int64
	s := newServer(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			h.ServeHTTP(w, r)
		})
	})
	s.seed(t, "greeting", "G", nil, "", []string{"One {{name}}", "Two {{name}}", "Three {{name}} {{place}}"}, map[prompts.Environment]int{prompts.Production: 1})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-split", "2=100"}, "give 2 to 10 versions"},
		{[]string{"-split", "1=1,2=1,3=1,4=1,5=1,6=1,7=1,8=1,9=1,10=1,11=1"}, "give 2 to 10 versions"},
		{[]string{"-split", "2=90,"}, "entry 2 is empty"},
		{[]string{"-split", "2,3"}, `"2" is not VERSION=WEIGHT`},
		{[]string{"-split", "2:90,3:10"}, `"2:90" is not VERSION=WEIGHT`},
		{[]string{"-split", "v2=90,3=10"}, `the version "v2" is not a version number`},
		{[]string{"-split", "0=90,3=10"}, `the version "0" is not a version number`},
		{[]string{"-split", "2=90%,3=10%"}, `the weight "90%" is not a whole number from 1 to 10000`},
		{[]string{"-split", "2=0,3=10"}, `the weight "0" is not a whole number from 1 to 10000`},
		{[]string{"-split", "2=10001,3=1"}, `the weight "10001"`},
		{[]string{"-split", "2=50,2=50"}, "version 2 is given twice"},
		{[]string{"-split", "2=50,3=50", "-version", "2"}, "give -version or -split, not both"},
		{nil, "-version N (1 or more) or -split VERSION=WEIGHT"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			is := is.New(t)
			before := requests.Load()
			r := cli(t, s, nil, append([]string{"promote", "greeting", "-environment", "production"}, c.args...)...)
			is.Equal(r.code, 1)
			is.True(strings.Contains(r.stderr, c.want)) // names the problem
			is.Equal(requests.Load(), before)           // nothing sent
		})
	}

	is := is.New(t)
	before := s.state(t)
	r := cli(t, s, nil, "promote", "greeting", "-environment", "production", "-split", "2=50,9=50")
	is.Equal(r.code, 1) // no version 9
	is.True(strings.Contains(r.stderr, "not one of its versions"))
	r = cli(t, s, nil, "promote", "greeting", "-environment", "production", "-split", "2=50,3=50")
	is.Equal(r.code, 1) // the guard: version 3 adds {{place}}
	is.True(strings.Contains(r.stderr, "-allow-variable-change"))
	r = cli(t, s, []string{"PROMPTS_API_KEY=" + writeKey}, "promote", "greeting", "-environment", "production", "-split", "1=50,2=50")
	is.Equal(r.code, 1) // a write key may not
	is.Equal(s.state(t), before)
	is.Equal(cli(t, s, nil, "promote", "greeting", "-environment", "production", "-split", "2=50,3=50", "-allow-variable-change").code, 0)
}

func TestShares(t *testing.T) {
	is := is.New(t)
	is.Equal(shares(prompts.Split{{VersionNumber: 3, Weight: 1}, {VersionNumber: 4, Weight: 2}}), "3 (33.33%), 4 (66.67%)")
}

// apply -promote counts every version of a split as active: a split that
// serves the latest version is left as it is, the promotion guard checks
// a new version against each of its versions, and the plan says what
// split it replaces.
func TestApplyPromoteWithASplit(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	p := s.seed(t, "greeting", "G", nil, "", []string{"Hi {{name}}", "Hello {{name}} from {{place}}"}, nil)
	split := func(entries ...int) {
		t.Helper()
		var sp prompts.Split
		for i := 0; i < len(entries); i += 2 {
			sp = append(sp, prompts.Share{VersionNumber: entries[i], Weight: entries[i+1]})
		}
		_, err := s.store.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, Split: sp,
			Change: prompts.Change{AllowVariableChange: true}})
		is.NoErr(err)
	}
	split(1, 90, 2, 10) // a canary of the latest version
	dir := t.TempDir()
	is.Equal(cli(t, s, nil, "export", "-dir", dir).code, 0)
	before := s.state(t)
	r := cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging")
	is.Equal(r.code, 0)
	is.True(strings.Contains(r.stdout, "unchanged"))
	is.Equal(s.state(t), before) // the canary stays

	// A new version: checked against every version of the split.
	split(2, 90, 1, 10)
	writeFiles(t, dir, map[string]string{"greeting.prompt": strings.Replace(readFiles(t, dir)["greeting.prompt"], "Hello", "Hey", 1)})
	r = cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging", "-dry-run")
	is.Equal(r.code, 1) // {{place}} is new to version 1
	is.True(strings.Contains(r.stdout+r.stderr, "-allow-variable-change"))
	r = cli(t, s, nil, "apply", "-dir", dir, "-promote", "staging", "-allow-variable-change")
	is.Equal(r.code, 0)
	is.True(strings.Contains(r.stdout, "staging held split 2 (90%), 1 (10%)"))
	a, err := s.store.GetActive(t.Context(), p.ID, prompts.Staging)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.VersionNumber, 3) // the split replaced
	is.Equal(a.Split, prompts.Split(nil))
}
