package prompts

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// The field rules the inputs share. Each rule and its message are written
// here once; the inputs' Validate methods apply them.

func checkKey(fe *fieldErrors, field, k string) {
	switch {
	case k == "":
		fe.add(field, "is required")
	case len(k) > MaxKey:
		fe.add(field, "must be at most 128 characters")
	case !ValidKey(k):
		fe.add(field, "must hold only ASCII letters, digits, '.', '_', '-' and '/', and start with a letter or digit")
	}
}

// ValidKey reports whether k is a well-formed prompt key.
func ValidKey(k string) bool {
	if len(k) == 0 || len(k) > MaxKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-' || c == '/'):
		default:
			return false
		}
	}
	return true
}

func validName(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return true
		}
	}
	return false
}

func checkName(fe *fieldErrors, field, s string) {
	if s == "" {
		fe.add(field, "is required")
		return
	}
	if !checkText(fe, field, s, MaxName) {
		return
	}
	if !validName(s) {
		fe.add(field, "must not be only white space")
	}
}

// checkRef checks a string that refers to something by id. Any string is
// a valid reference (an unknown or malformed id is simply not found), but
// like every string it must be valid UTF-8 without NUL characters.
func checkRef(fe *fieldErrors, field, id string, required bool) {
	switch {
	case id == "":
		if required {
			fe.add(field, "is required")
		}
	case !utf8.ValidString(id):
		fe.add(field, "must be valid UTF-8")
	case containsNUL(id):
		fe.add(field, ruleNoNUL)
	}
}

// ruleNoNUL is the rule of every string: PostgreSQL cannot store the NUL
// character, so no Store takes it.
const ruleNoNUL = "must not contain the NUL character (\\u0000)"

// checkText checks a free text: valid UTF-8, no NUL, at most max code
// points. It reports whether the text passed.
func checkText(fe *fieldErrors, field, s string, max int) bool {
	switch {
	case !utf8.ValidString(s):
		fe.add(field, "must be valid UTF-8")
	case containsNUL(s):
		fe.add(field, ruleNoNUL)
	case utf8.RuneCountInString(s) > max:
		fe.add(field, "must be at most "+strconv.Itoa(max)+" characters")
	default:
		return true
	}
	return false
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}
