package browsertest

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestLongNamesFitAPhone visits every page that shows a variable with a
// 64-character name (the version, a new version, rendering it, with and
// without an error): at 375 px wide none scrolls sideways (checkPage
// checks each page the tab reaches). Such a name is one word, so the
// label and the list of variables must break it.
func TestLongNamesFitAPhone(t *testing.T) {
	need(t)
	is := is.New(t)
	long := strings.Repeat("customer_", 6) + "account"
	long += strings.Repeat("x", 64-len(long))
	is.Equal(len(long), 64)
	s := startServer(t, []string{"Acme"})
	a := s.project(t, "Acme")
	s.seed(t, a.ID, "support/"+long, "Long", "Hello {{"+long+"}} and {{name}}.")

	b := newTab(t, s, true)
	b.open("/ui/")
	b.signIn("deploy")
	b.follow("Acme")
	b.follow("support/" + long)
	is.Equal(b.follow("Version 1"), int64(200))
	is.True(strings.Contains(b.text(), long))
	is.Equal(b.follow("Render version 1"), int64(200))
	b.one("field", long)
	is.Equal(b.press("Render"), int64(200)) // empty values are values
	b.fill(long, strings.Repeat("y", 80))
	is.Equal(b.press("Render"), int64(200))
	b.follow("support/" + long)
	is.Equal(b.follow("New version"), int64(200))
	is.Equal(b.press("Show variables"), int64(200))
	is.True(strings.Contains(b.text(), long))
}
