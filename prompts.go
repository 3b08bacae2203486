// Package prompts is the vocabulary of prompt management: projects, prompts,
// their immutable numbered versions, and the environments (production,
// staging) that each point at one version, so that a prompt can be
// changed, promoted and rolled back without a deploy.
//
// The package does no I/O. It defines the types, their validation, the
// errors, and the Store interface whose contract every backend keeps. The
// module's other packages build on it:
//
//   - memstore: the embedded Store: in memory (New), the one for unit
//     tests, or in memory and on a file (Open), durable: every write is on
//     disk before it returns.
//   - sqlstore: PostgreSQL, for services with many replicas.
//   - storetest: the conformance suite every Store passes.
//   - cache: a Store over any Store that answers reads from memory, kept
//     fresh across processes by a Feed (sqlstore.NewFeed over PostgreSQL).
//   - api: the JSON of the HTTP interface (its requests, answers, events,
//     webhook bodies and snapshot), for Go programs that read it.
//   - httpapi: the /v1/integration HTTP interface over any Store.
//   - ui: a web interface over any Store, for the people who read,
//     compare, write, promote and roll back prompts.
//   - webhook: the dispatcher that delivers events to webhooks, and
//     Verify for their receivers.
//   - client: a Store over the HTTP interface, and a Feed over its event
//     stream, for services that read their prompts from a server.
//   - promptfile: prompt files (KEY.prompt: Dotprompt's YAML front matter
//     and the template), read, written and compared.
//   - cmd/promptsd: the standalone server, for services not written in Go.
//   - cmd/prompts: the command that keeps a directory of prompt files and
//     a server in agreement (in CI), and reads, renders, promotes and
//     rolls back prompts for people at a terminal.
//
// An application reads a prompt the way it refers to it, by project and key,
// in the environment it runs in:
//
//	p, err := store.GetActiveByKey(ctx, projectID, "support/greeting", prompts.Production)
//	if err != nil { ... }
//	if p.ActiveVersion != nil {
//		use(p.ActiveVersion.Content)
//	}
//
// Every input type has a Validate method that reports all invalid fields at
// once; every Store calls it first, so a refused input changes nothing.
//
// Every prompt carries a Revision that grows with each change to the
// prompt, to its versions and to what its environments point at: what
// entity tags, caches and compare-and-swap key on.
//
// A write given an Idempotency (NewPrompt, NewVersion, Rollback) is done
// once however often it is repeated: a repeat answers the resource the
// first write made or changed, read again by its id, as it is now. A
// version never changes, so a repeated create of one answers it as the
// first did; a repeated create of a prompt answers the prompt with the
// name, key and revision it has now; a repeated rollback answers the
// environment as GetActive does now, which, if it was changed again
// since, is the version active now. The Store keeps only the ids, so a
// key costs a few hundred bytes, whatever the size of what it replays.
//
// Every change of what an environment points at writes a Deployment (who,
// why, from which version to which), can be undone with Rollback, and can
// expect a revision (Change.IfRevision, compare-and-swap). A version's
// content is a template: Variables lists its {{variables}}, Render fills
// them strictly, and activating a version whose variables differ from the
// active one's is refused unless allowed (the promotion guard).
//
// A version's TemplateFormat is FormatPlain ({{name}} and nothing else)
// or FormatDotprompt (Dotprompt's Handlebars, rendered to chat messages
// by Template.Render: roles, history, media); a version naming none
// takes its prompt's latest version's, a prompt's first is plain.
// A dotprompt template includes other prompts of its project as partials
// ({{> KEY}}, at their versions active in the environment rendered:
// Renderer renders them over any Store; PromptVersion.Partials lists
// them, and a Store refuses to activate a version whose partials are not
// active there, or to deactivate a prompt an active version includes,
// unless told to).
//
// A dotprompt version's Metadata is its Dotprompt front matter (less name
// and description): model, config, input (schema, default), output
// (format, schema), tools, metadata and namespaced ns.key extensions.
// The keys Dotprompt defines must have their shape when the version is
// stored, and its schemas, in Picoschema or JSON Schema, must compile
// (VersionSignature; nothing is ever fetched for a schema). With an input
// schema, the version's Variables are the schema's properties, rendering
// checks the values against it (after input.default), and the promotion
// guard also refuses a change of a variable's type, of anything else its
// schema accepts, or of what is required (DiffSignatures). Template.Render answers the model, config
// and output with the messages.
//
// The types here know no wire format: the JSON of the HTTP interface,
// with its field names (metadata_ included), is package api's, with
// conversions from and to these types.
//
// # Writing a Store
//
// A Store of one's own calls the inputs' Validate first, stamps ids and
// times with a Clock (NewID, NewIDAfter, Clock.Now), moves revisions on
// with NextRevision, computes a version's Signature (VersionSignature:
// its Variables, and its typed inputs, which it keeps beside them) and
// its Partials (TemplatePartials) once when it stores it and knows its
// format, writes a Deployment for every change of an environment in the
// same atomic step (checking Change.IfRevision, the promotion guard,
// DiffSignatures, and the partials guards, under the same lock), returns
// the errors that NotFound,
// Conflict, KeyTaken, SlugTaken, NothingToRollBack, PreconditionFailed,
// VariablesChanged, PartialUnavailable, PartialInUse, Unavailable,
// ContextDone and Internal make, and passes
// storetest.Run. Its optional abilities are interfaces found by type
// assertion: ActiveReader (reads with options, such as a shared answer),
// EventLog and WebhookStore; a wrapper of another Store has Unwrap
// instead of claiming the abilities of the store it wraps.
package prompts

import "time"

// Limits of the field rules, in Unicode code points.
const (
	MaxKey           = 128
	MaxName          = 256
	MaxDescription   = 4096
	MaxChangeSummary = 1024
)

// Prompt is a named, versioned prompt of a project.
type Prompt struct {
	ID              string
	ProjectID       string
	Key             string // unique within the project, case-sensitive
	Name            string
	Description     *string // nil is null
	LatestVersionID string  // "" while the prompt has no versions
	CreatedAt       time.Time

	// Revision orders the states of the prompt. It grows with every change
	// to the prompt, to its versions (a new one) and to what its
	// environments point at, and stays as it is when a call changes
	// nothing. Compare revisions of one prompt only: the value is not a
	// count of changes (see NextRevision).
	Revision int64

	// Replayed is true on the result of a write repeated with the
	// Idempotency of an earlier one: nothing was written, and the result
	// is what the earlier write made or changed, read again (see
	// Replay). It is never stored.
	Replayed bool
}

// NewPrompt is the input to Store.CreatePrompt.
type NewPrompt struct {
	ProjectID   string      // required; an unknown project is not found
	Key         string      // required: 1–128 of ASCII letters, digits, . _ - /, starting with a letter or digit
	Name        string      // required: 1–256 characters, not only white space
	Description *string     // optional: up to 4,096 characters
	Idempotency Idempotency // optional: makes a repeat of this create do nothing new
}

// Validate reports every field that breaks a rule, at once.
func (in NewPrompt) Validate() error {
	var fe fieldErrors
	checkRef(&fe, "project_id", in.ProjectID, true)
	checkKey(&fe, "key", in.Key)
	checkName(&fe, "name", in.Name)
	if in.Description != nil {
		checkText(&fe, "description", *in.Description, MaxDescription)
	}
	in.Idempotency.check(&fe)
	return fe.err()
}

// Optional is one optional field of an input, in one of three states:
// absent (the zero value), null (Null), or a value (Some). Where an input
// does not say otherwise, null means the same as absent. (Package api
// reads and writes it in JSON.)
type Optional[T any] struct {
	Set   bool // the field was given, as null or as a value
	Null  bool // it was given as null
	Value T
}

// Some returns an Optional holding v.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: v} }

// Null returns an Optional given as null.
func Null[T any]() Optional[T] { return Optional[T]{Set: true, Null: true} }

// HasValue reports whether o holds a value: it was given, and not as null.
func (o Optional[T]) HasValue() bool { return o.Set && !o.Null }

// PromptUpdate is the input to Store.UpdatePrompt. A field left absent
// stays unchanged; the zero PromptUpdate is a valid no-op.
type PromptUpdate struct {
	Key         Optional[string] // null is invalid
	Name        Optional[string] // null is invalid
	Description Optional[string] // null clears it
}

// Validate reports every field that breaks a rule, at once.
func (in PromptUpdate) Validate() error {
	var fe fieldErrors
	if in.Key.Null {
		fe.add("key", "cannot be null")
	} else if in.Key.Set {
		checkKey(&fe, "key", in.Key.Value)
	}
	if in.Name.Null {
		fe.add("name", "cannot be null")
	} else if in.Name.Set {
		checkName(&fe, "name", in.Name.Value)
	}
	if in.Description.HasValue() {
		checkText(&fe, "description", in.Description.Value, MaxDescription)
	}
	return fe.err()
}

// Apply returns p with the update applied, and whether that changed
// anything (a field set to the value it has changes nothing). It assumes
// in is valid, and leaves p.Revision as it is.
func (in PromptUpdate) Apply(p Prompt) (Prompt, bool) {
	changed := false
	if in.Key.Set && p.Key != in.Key.Value {
		p.Key, changed = in.Key.Value, true
	}
	if in.Name.Set && p.Name != in.Name.Value {
		p.Name, changed = in.Name.Value, true
	}
	if in.Description.Set {
		switch {
		case in.Description.Null:
			changed = changed || p.Description != nil
			p.Description = nil
		case p.Description == nil || *p.Description != in.Description.Value:
			d := in.Description.Value
			p.Description, changed = &d, true
		}
	}
	return p, changed
}

// PromptFilter selects the prompts Store.ListPrompts returns.
type PromptFilter struct {
	// ProjectIDs, when not nil, limits the list to prompts of these
	// projects (an empty, non-nil slice lists nothing). The HTTP layer
	// puts here the one project asked for, or the projects a key may see.
	ProjectIDs []string
	// Key, when not empty, limits the list to prompts with this key (at
	// most one per project). It must be a well-formed key.
	Key string
	Page
}

// Validate reports every field that breaks a rule, at once.
func (f PromptFilter) Validate() error {
	var fe fieldErrors
	for _, id := range f.ProjectIDs {
		// An empty or unknown id lists nothing; a broken one is invalid.
		if checkRef(&fe, "project_id", id, false); len(fe) > 0 {
			break // one error is enough
		}
	}
	if f.Key != "" {
		checkKey(&fe, "key", f.Key)
	}
	f.Page.check(&fe)
	return fe.err()
}

// Page selects one page of a list. Lists are ordered by id (oldest first,
// but versions newest first); After is the id of the last item already
// seen: a position, so it need not name an existing item.
type Page struct {
	Limit int    // 1–1000; 0 means DefaultLimit
	After string // "" for the first page; else a well-formed id
}

// Paging bounds.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Size returns the number of items the page holds at most.
func (p Page) Size() int {
	if p.Limit == 0 {
		return DefaultLimit
	}
	return p.Limit
}

// Validate checks the limit and the position.
func (p Page) Validate() error {
	var fe fieldErrors
	p.check(&fe)
	return fe.err()
}

func (p Page) check(fe *fieldErrors) {
	if p.Limit < 0 || p.Limit > MaxLimit {
		fe.add("limit", "must be an integer from 1 to 1000")
	}
	if p.After != "" && !ValidID(p.After) {
		fe.add("after", "must be a well-formed id (a ULID)")
	}
}

// Copy returns p with its own copy of Description, so that changing one
// does not change the other.
func (p Prompt) Copy() Prompt {
	if p.Description != nil {
		d := *p.Description
		p.Description = &d
	}
	return p
}
