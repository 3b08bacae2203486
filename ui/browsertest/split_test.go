package browsertest

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// share is one entry of a split, as the HTTP interface answers it.
type share struct {
	VersionNumber int `json:"version_number"`
	Weight        int `json:"weight"`
}

// splitOf returns the split env holds, through the HTTP interface; nil
// for none.
func (s *server) splitOf(t *testing.T, promptID, env string) []share {
	t.Helper()
	var p struct {
		Split []share `json:"split"`
	}
	s.api(t, "admin", "GET", "/prompts/"+promptID+"?environment="+env, nil, 200, &p)
	return p.Split
}

// TestSplit sets a split from the promote page, as a person with a deploy
// key does, with page scripts on and off: the split form, a row more, the
// split shown with its shares on the prompt's page and in its history,
// and a rollback from it. Each change is checked through the HTTP
// interface; every page passes the checks (axe-core among them).
func TestSplit(t *testing.T) {
	need(t)
	modes(t, func(t *testing.T, scripts bool) {
		is := is.New(t)
		s, g := acme(t)
		s.api(t, "write", "POST", "/prompts/"+g.ID+"/versions", map[string]any{"content": greetingV2, "change_summary": "open later"}, 200, nil)
		b := toGreeting(t, s, "deploy", scripts)

		// From the promote page to its split form.
		is.Equal(b.follow("Promote"), int64(200))
		is.Equal(b.follow("split between versions"), int64(200))
		is.True(!b.has("combobox", "Version"))
		b.one("combobox", "Entry 3 version")
		is.True(!b.has("combobox", "Entry 4 version"))
		is.Equal(b.press("Add an entry"), int64(200)) // one row more, and nothing changes
		b.one("combobox", "Entry 4 version")
		is.Equal(s.splitOf(t, g.ID, "production"), []share(nil))

		b.choose("Entry 1 version", "Version 1")
		b.fill("Entry 1 weight", "90")
		b.choose("Entry 2 version", "Version 2")
		b.fill("Entry 2 weight", "10")
		b.choose("Environment", "production")
		b.fill("Reason", "canary of ten")
		is.Equal(b.press("Promote"), int64(200))
		is.Equal(s.splitOf(t, g.ID, "production"), []share{{1, 90}, {2, 10}})
		d := s.deployments(t, g.ID)[0]
		checkRecord(t, d, "production", "split", 1, 1, "dan-deploy", "canary of ten")

		// The prompt's page shows the split with its shares.
		page := b.text()
		is.True(strings.Contains(page, "A split is active in production now: versions 1 (90%) and 2 (10%)"))
		is.True(strings.Contains(page, "Version 1: 90%"))
		is.True(strings.Contains(page, "Version 2: 10%"))
		is.True(strings.Contains(page, "Split: versions 1 (90%) and 2 (10%) (was version 1)"))
		b.screenshot("split")

		// Rolling back returns production to version 1, and says so.
		is.Equal(b.follow("Roll back"), int64(200))
		b.choose("Environment", "production")
		is.True(strings.Contains(b.text(), "back to version 1 (from versions 1 (90%) and 2 (10%))"))
		is.Equal(b.press("Roll back"), int64(200))
		is.Equal(s.splitOf(t, g.ID, "production"), []share(nil))
		is.Equal(s.active(t, g.ID, "production"), 1)
		is.True(strings.Contains(b.text(), "Rolled back: version 1 (was versions 1 (90%) and 2 (10%))"))
	})
}
