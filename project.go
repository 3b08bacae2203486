package prompts

import (
	"strings"
	"time"
)

// Project groups prompts; a prompt's key is unique within its project.
type Project struct {
	ID          string
	Name        string
	Slug        string // lower-case letters, digits and single hyphens; unique in the store
	Description string // may be empty, never null
	IsPrivate   bool
	CreatedAt   time.Time
}

// NewProject is the input to Store.CreateProject.
type NewProject struct {
	Name        string // required: 1–256 characters, not only white space
	Slug        string // optional: derived from Name when empty; 1–128 of a-z, 0-9 and single hyphens
	Description string // optional: up to 4,096 characters
	IsPrivate   bool
}

// Validate reports every field that breaks a rule, at once.
func (in NewProject) Validate() error {
	var fe fieldErrors
	checkName(&fe, "name", in.Name)
	if in.Slug != "" {
		if !validSlug(in.Slug) {
			fe.add("slug", "must be 1 to 128 lower-case letters, digits and single hyphens, starting and ending with a letter or digit")
		}
	} else if validName(in.Name) && Slugify(in.Name) == "" {
		fe.add("slug", "cannot be derived from the name; give one")
	}
	checkText(&fe, "description", in.Description, MaxDescription)
	return fe.err()
}

// ProjectSlug returns the slug the project will have: Slug, or one derived
// from Name.
func (in NewProject) ProjectSlug() string {
	if in.Slug != "" {
		return in.Slug
	}
	return Slugify(in.Name)
}

// Slugify derives a slug from a name: ASCII letters and digits lower-cased,
// every other run of characters one hyphen, at most 128 characters.
func Slugify(name string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		default:
			hyphen = b.Len() > 0
			continue
		}
		if b.Len() >= 128-2 {
			break
		}
		if hyphen {
			b.WriteByte('-')
			hyphen = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func validSlug(s string) bool {
	if len(s) == 0 || len(s) > 128 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && s[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// ProjectFilter selects the projects Store.ListProjects returns.
type ProjectFilter struct {
	// IDs, when not nil, limits the list to these projects (an empty,
	// non-nil slice lists nothing): the projects an API key may see.
	IDs []string
	Page
}

// Validate checks the page.
func (f ProjectFilter) Validate() error {
	var fe fieldErrors
	f.Page.check(&fe)
	return fe.err()
}
