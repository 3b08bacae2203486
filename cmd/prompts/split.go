package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
)

// parseSplit reads promote's -split: VERSION=WEIGHT entries separated by
// commas, as 3=90,4=10 (spaces around an entry are allowed). Each
// problem is named for the person, before anything is sent: the server
// would refuse the same split, naming its JSON fields instead.
func parseSplit(s string) (prompts.Split, error) {
	const example = "as 3=90,4=10"
	parts := strings.Split(s, ",")
	if len(parts) < prompts.MinSplitVersions || len(parts) > prompts.MaxSplitVersions {
		return nil, fmt.Errorf("-split %q: give %d to %d versions, each VERSION=WEIGHT, separated by commas, %s", s, prompts.MinSplitVersions, prompts.MaxSplitVersions, example)
	}
	split := make(prompts.Split, 0, len(parts))
	seen := map[int]bool{}
	for i, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("-split %q: entry %d is empty: each entry is VERSION=WEIGHT, %s", s, i+1, example)
		}
		v, w, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("-split %q: %q is not VERSION=WEIGHT, %s", s, part, example)
		}
		v, w = strings.TrimSpace(v), strings.TrimSpace(w)
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-split %q: in %q, the version %q is not a version number (1 or more)", s, part, v)
		}
		weight, err := strconv.Atoi(w)
		if err != nil || weight < 1 || weight > prompts.MaxSplitWeight {
			return nil, fmt.Errorf("-split %q: in %q, the weight %q is not a whole number from 1 to %d", s, part, w, prompts.MaxSplitWeight)
		}
		if seen[n] {
			return nil, fmt.Errorf("-split %q: version %d is given twice: each entry is a different version", s, n)
		}
		seen[n] = true
		split = append(split, prompts.Share{VersionNumber: n, Weight: weight})
	}
	return split, nil
}

// shares describes a split for people: each version by number with its
// share of subjects, "3 (90%), 4 (10%)".
func shares(s prompts.Split) string {
	total := 0
	for _, e := range s {
		total += e.Weight
	}
	parts := make([]string, len(s))
	for i, e := range s {
		parts[i] = strconv.Itoa(e.VersionNumber) + " (" + prompts.SharePercent(e.Weight, total) + ")"
	}
	return strings.Join(parts, ", ")
}

// served says what an environment serves, for people: "version 3",
// "split 3 (90%), 4 (10%)", or "no version".
func served(a prompts.ActivePrompt) string {
	switch {
	case len(a.Split) > 0:
		return "split " + shares(a.Split)
	case a.ActiveVersion != nil:
		return "version " + strconv.Itoa(a.ActiveVersion.VersionNumber)
	}
	return "no version"
}
