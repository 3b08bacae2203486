package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

func TestNewRefusesInvalidSchemaNames(t *testing.T) {
	is := is.New(t)
	db := sqlx.NewDb(nil, "postgres") // New does no I/O: a pool is not even needed
	for _, name := range []string{"", "pg_prompts", "PG_x", "1prompts", "a-b", "a b", `a"b`, "a.b", "a$", "é", strings.Repeat("a", 64)} {
		_, err := sqlstore.New(db, sqlstore.WithSchema(name))
		is.True(err != nil) // New refuses the schema name
	}
	for _, name := range []string{"prompts", "_x", "Tenant_1", strings.Repeat("a", 63)} {
		_, err := sqlstore.New(db, sqlstore.WithSchema(name))
		is.NoErr(err) // New takes the schema name
	}
	_, err := sqlstore.New(nil)
	is.True(err != nil) // New refuses a nil pool
	s, err := sqlstore.New(db)
	is.NoErr(err)                                // defaults
	is.Equal(s.Schema(), sqlstore.DefaultSchema) // schema "prompts"
}

// migrationCount returns how many migration files there are.
func migrationCount(t *testing.T) int {
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	return len(files)
}

// appliedCount returns how many migrations the schema records.
func appliedCount(t *testing.T, schema string) int {
	t.Helper()
	var n int
	if err := database(t).Get(&n, `SELECT count(*) FROM `+pq.QuoteIdentifier(schema)+`.schema_migrations`); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMigrateTwice(t *testing.T) {
	is := is.New(t)
	s := newSQLStore(t)                                      // migrated once
	is.NoErr(s.Migrate(context.Background()))                // and again
	is.Equal(appliedCount(t, s.Schema()), migrationCount(t)) // each migration recorded once
	fixture(t, s)                                            // and the store works
}

// TestMigrateConcurrently: replicas starting at once all run Migrate on a
// schema that does not exist yet, each on a connection of its own.
func TestMigrateConcurrently(t *testing.T) {
	is := is.New(t)
	schema := freshSchema(t, database(t))
	const replicas = 8
	errs := make([]error, replicas)
	stores := make([]*sqlstore.Store, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		s, err := sqlstore.New(openDB(t, 1, ""), sqlstore.WithSchema(schema))
		is.NoErr(err) // new store
		stores[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Migrate(context.Background())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		is.NoErr(err) // every replica's Migrate succeeds
	}
	is.Equal(appliedCount(t, schema), migrationCount(t)) // each migration applied once
	for _, s := range stores {
		fixture(t, s) // every replica works
		is.NoErr(s.Close())
	}
}

// TestMigrateTakesTheLock: Migrate waits for the schema's advisory lock
// before it changes anything, and does not take it when the schema is up
// to date (then it only reads).
func TestMigrateTakesTheLock(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := database(t)
	schema := freshSchema(t, db)
	s, err := sqlstore.New(db, sqlstore.WithSchema(schema))
	is.NoErr(err) // new store
	defer s.Close()
	conn, err := db.Connx(ctx)
	is.NoErr(err) // a session of its own
	defer conn.Close()
	key := sqlstore.MigrateLockKey(s)
	_, err = conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key)
	is.NoErr(err) // another replica holds the lock
	done := make(chan error, 1)
	go func() { done <- s.Migrate(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("Migrate returned while another session held the lock: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	var exists bool
	is.NoErr(db.Get(&exists, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema))
	is.True(!exists) // not even the schema was created without the lock
	_, err = conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, key)
	is.NoErr(err)    // the other replica is done
	is.NoErr(<-done) // Migrate goes on and succeeds

	_, err = conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key)
	is.NoErr(err) // the lock is held again
	quick, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	is.NoErr(s.Migrate(quick)) // up to date: Migrate does not wait for it
	_, err = conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, key)
	is.NoErr(err) // release
}

// TestUseBeforeMigrate: a call before Migrate fails as internal, saying
// so; after Migrate the same Store works.
func TestUseBeforeMigrate(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, err := sqlstore.New(database(t), sqlstore.WithSchema(freshSchema(t, database(t))))
	is.NoErr(err) // new store, not migrated
	defer s.Close()
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.Equal(prompts.ErrorCode(err), prompts.CodeInternal)      // fails as internal
	is.True(strings.Contains(err.Error(), "run Store.Migrate")) // with a cause that says what to do
	is.NoErr(s.Migrate(ctx))                                    // migrate
	fixture(t, s)                                               // now it works
}

func TestClose(t *testing.T) {
	is := is.New(t)
	s := newSQLStore(t)
	_, p := fixture(t, s)
	is.NoErr(s.Close()) // close
	is.NoErr(s.Close()) // twice
	_, err := s.GetPrompt(context.Background(), p.ID)
	is.Equal(prompts.ErrorCode(err), prompts.CodeInternal) // a closed store fails
	is.True(strings.Contains(err.Error(), "closed"))       // because it is closed
	var n int
	is.NoErr(database(t).Get(&n, `SELECT 1`)) // and the pool, the caller's, is still open
}

// migratedTo returns a Store in a fresh schema of the shared pool with
// the migrations up to n applied, closed when the test ends; the pool; and
// the schema's name.
func migratedTo(t *testing.T, n int) (s *sqlstore.Store, db *sqlx.DB, schema string) {
	t.Helper()
	db = database(t)
	schema = freshSchema(t, db)
	s, err := sqlstore.New(db, sqlstore.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := sqlstore.MigrateTo(context.Background(), s, n); err != nil {
		t.Fatal(err)
	}
	return s, db, schema
}

// The ids of the rows seedOldRows writes.
const (
	oldProjectID = "01JAAAAAAAAAAAAAAAAAAAAAAA"
	oldPromptID  = "01JBBBBBBBBBBBBBBBBBBBBBBB"
)

// seedOldRows writes in the schema q (quoted), as a release before the
// migration under test did, the project oldProjectID and in it the prompt
// oldPromptID, with versionCount versions and the latest latestID (none
// if ""); the versions are the caller's to write.
func seedOldRows(db *sqlx.DB, q string, versionCount int, latestID string) {
	db.MustExec(`INSERT INTO `+q+`.projects VALUES ($1, 'P', 'p', '', false, now())`, oldProjectID)
	db.MustExec(`INSERT INTO `+q+`.prompts (id, project_id, key, name, version_count, latest_version_id, created_at, revision) VALUES ($1, $2, 'k', 'K', $3, $4, now(), 1)`,
		oldPromptID, oldProjectID, versionCount, sql.NullString{String: latestID, Valid: latestID != ""})
}

// TestMigrateUpgradesData upgrades a schema that holds data written under
// the first migration: everything reads back as it was, every prompt has
// a revision, and the writes go on from there.
func TestMigrateUpgradesData(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, db, schema := migratedTo(t, 1) // the first migration only

	// Data as the first release of the Store wrote it.
	const (
		projectID = "01JAAAAAAAAAAAAAAAAAAAAAAA"
		promptID  = "01JBBBBBBBBBBBBBBBBBBBBBBB"
		emptyID   = "01JCCCCCCCCCCCCCCCCCCCCCCC"
		v1ID      = "01JDDDDDDDDDDDDDDDDDDDDDD1"
		v2ID      = "01JDDDDDDDDDDDDDDDDDDDDDD2"
	)
	created := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	tx := db.MustBegin()
	tx.MustExec(`SET LOCAL search_path TO ` + pq.QuoteIdentifier(schema))
	tx.MustExec(`INSERT INTO projects VALUES ($1, 'Old', 'old', '', false, $2)`, projectID, created)
	tx.MustExec(`INSERT INTO prompts (id, project_id, key, name, description, latest_version_id, version_count, created_at)
		VALUES ($1, $2, 'greeting', 'Greeting', 'hi', $3, 2, $4), ($5, $2, 'empty', 'Empty', NULL, NULL, 0, $4)`,
		promptID, projectID, v2ID, created, emptyID)
	tx.MustExec(`INSERT INTO versions VALUES ($1, 1, $2, 'one', NULL, '{"n": 1.50}', $4), ($1, 2, $3, 'two', 'second', NULL, $4)`,
		promptID, v1ID, v2ID, created)
	tx.MustExec(`INSERT INTO deployments VALUES ($1, 'production', 1, $2), ($1, 'staging', 2, $2)`, promptID, created)
	is.NoErr(tx.Commit())

	before := time.Now()
	is.NoErr(s.Migrate(ctx))                             // the rest
	is.Equal(appliedCount(t, schema), migrationCount(t)) // every migration recorded
	var tables []string
	is.NoErr(db.Select(&tables, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, schema))
	is.Equal(tables, []string{"api_keys", "deliveries", "delivery_attempts", "deployments", "environments", "events", "idempotency",
		"project_environments", "projects", "prompts", "schema_migrations", "server_keys", "versions", "webhook_routes", "webhooks"}) // the pointers moved; the history, the events, webhooks, the servers' keys, the API keys and the projects' environments are new
	var records int
	is.NoErr(db.Get(&records, `SELECT count(*) FROM `+pq.QuoteIdentifier(schema)+`.deployments`))
	is.Equal(records, 0) // and empty: the first release kept none
	last, err := s.LastEventID(ctx)
	is.NoErr(err)
	is.Equal(last, int64(0)) // nor events

	prod, err := s.GetActive(ctx, promptID, prompts.Production)
	is.NoErr(err)
	is.Equal(prod.Key, "greeting")
	is.Equal(*prod.Description, "hi")
	is.Equal(prod.LatestVersionID, v2ID)
	is.True(prod.CreatedAt.Equal(created))
	is.Equal(prod.ActiveVersion.ID, v1ID)
	is.Equal(string(prod.ActiveVersion.Metadata), `{"n": 1.50}`)   // kept to the digit
	is.True(prod.Revision >= before.Add(-time.Minute).UnixMicro()) // revisions start at the migration's time
	staging, err := s.GetActive(ctx, promptID, prompts.Staging)
	is.NoErr(err)
	is.Equal(staging.ActiveVersion.VersionNumber, 2)
	is.Equal(*staging.ActiveVersion.ChangeSummary, "second")
	is.Equal(staging.Revision, prod.Revision) // one prompt, one revision
	empty, err := s.GetPrompt(ctx, emptyID)
	is.NoErr(err)
	is.True(empty.Revision > 0) // prompts without versions have one too
	versions, _, err := s.ListVersions(ctx, promptID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(versions), 2)

	// The writes go on from the data: numbers continue, environments move,
	// and each change moves the revision on.
	rev := prod.Revision
	v3, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: promptID, Content: "three"})
	is.NoErr(err)
	is.Equal(v3.VersionNumber, 3)
	a, err := s.Activate(ctx, prompts.Activation{PromptID: promptID, Environment: prompts.Production, VersionNumber: prompts.Some(3)})
	is.NoErr(err)
	is.Equal(a.ActiveVersion.ID, v3.ID)
	is.True(a.Revision > rev) // moved on by the version and the activation
	is.NoErr(deactivate(ctx, s, promptID, prompts.Staging))
	after, err := s.GetPrompt(ctx, promptID)
	is.NoErr(err)
	is.True(after.Revision > a.Revision) // and by the deactivation
	staging, err = s.GetActive(ctx, promptID, prompts.Staging)
	is.NoErr(err)
	is.True(staging.ActiveVersion == nil) // deactivated
	history, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: promptID})
	is.NoErr(err)
	is.Equal(len(history), 2)                      // the changes since the upgrade are recorded
	is.Equal(*history[0].PreviousVersionNumber, 2) // the deactivation, from the old data's staging
	is.Equal(*history[1].PreviousVersionID, v1ID)  // the activation, from the old data's production
	rolled, err := s.Rollback(ctx, prompts.Rollback{PromptID: promptID, Environment: prompts.Production})
	is.NoErr(err)
	is.Equal(rolled.ActiveVersion.ID, v1ID) // back to what the old data had

	// The writes since the upgrade are in the event log, from id 1, with
	// the resources they made: the old data's versions among them.
	events, _, err := s.ListEvents(ctx, prompts.EventFilter{})
	is.NoErr(err)
	var got []string
	for i, e := range events {
		is.Equal(e.ID, int64(i+1)) // from 1, in order
		got = append(got, string(e.Type))
	}
	is.Equal(got, []string{"version.created", "deployment.created", "deployment.created", "deployment.created"})
	is.Equal(events[0].Version.VersionNumber, 3)
	is.Equal(*events[3].Deployment.VersionID, v1ID)
	is.Equal(*events[3].Deployment.PreviousVersionID, v3.ID)
}

// TestMigrateVariables: migration 4 gives the versions stored before it
// the variables prompts.Variables finds, with an expression of its own;
// this holds the two to each other on the grammar's corner cases.
func TestMigrateVariables(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, db, schema := migratedTo(t, 3)
	contents := []string{
		"", "no variables", "Hello {{name}}!", "{{ name }} and {{  name}} and {{name   }}",
		"{{b}} {{a}} {{_x}} {{B}} {{a1}} {{Z}} {{_}}", "{{\tname}} {{\u00a0name}} {{1x}} {{x-y}} {{}} {{x y}}",
		"{{é}} {{naïve}} {{x}}é", "{{x}}{{y}}", "{{{x}}}", "{{{{x}}}}", "{{ {{x}} }}", "{{x}", "{x}} {{x} }", "{{x}}}", "{{x}}{{",
	}
	const promptID = oldPromptID
	q := pq.QuoteIdentifier(schema)
	seedOldRows(db, q, len(contents), "")
	for i, c := range contents {
		db.MustExec(`INSERT INTO `+q+`.versions (prompt_id, version_number, id, content, created_at) VALUES ($1, $2, $3, $4, now())`,
			promptID, i+1, fmt.Sprintf("01JC%022d", i), c)
	}
	is.NoErr(s.Migrate(ctx))
	for i, c := range contents {
		v, err := s.GetVersion(ctx, promptID, i+1)
		is.NoErr(err)
		if !slices.Equal(v.Variables, prompts.Variables(c)) || v.Variables == nil {
			t.Errorf("%q: the migration found %q, prompts.Variables %q", c, v.Variables, prompts.Variables(c))
		}
	}
}

// TestMigrateTemplateFormat: migration 9 makes the versions stored
// before it plain, and a new version of their prompt, naming no format,
// is plain too; one naming dotprompt is stored as such.
func TestMigrateTemplateFormat(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, db, schema := migratedTo(t, 8)
	const promptID, v1ID = oldPromptID, "01JCCCCCCCCCCCCCCCCCCCCCC1"
	q := pq.QuoteIdentifier(schema)
	seedOldRows(db, q, 1, v1ID)
	db.MustExec(`INSERT INTO `+q+`.versions (prompt_id, version_number, id, content, created_at, variables) VALUES ($1, 1, $2, '{{#if x}}{{y}}', now(), '{y}')`, promptID, v1ID)
	is.NoErr(s.Migrate(ctx))
	v1, err := s.GetVersion(ctx, promptID, 1)
	is.NoErr(err)
	is.Equal(v1.TemplateFormat, prompts.FormatPlain) // stored before: plain
	v2, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: promptID, Content: "{{#if x}}{{y}}"})
	is.NoErr(err)
	is.Equal(v2.TemplateFormat, prompts.FormatPlain) // the latest's format
	v3, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: promptID, Content: "{{#if x}}{{y}}{{/if}}", TemplateFormat: prompts.FormatDotprompt})
	is.NoErr(err)
	got, err := s.GetVersion(ctx, promptID, 3)
	is.NoErr(err)
	is.Equal(got.TemplateFormat, prompts.FormatDotprompt)
	is.Equal(got.Variables, v3.Variables)
	_, err = db.Exec(`INSERT INTO `+q+`.versions (prompt_id, version_number, id, content, created_at, variables, template_format) VALUES ($1, 9, '01JCCCCCCCCCCCCCCCCCCCCCC9', 'x', now(), '{}', 'jinja')`, promptID)
	is.True(err != nil) // the column holds the two formats only
}

// TestMigrateInputs: migration 10 gives the versions stored before it no
// typed inputs, so a dotprompt version stored then keeps its variables and
// types none; the versions stored after it keep theirs, which the
// promotion guard compares.
func TestMigrateInputs(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, db, schema := migratedTo(t, 9)
	const promptID, v1ID = oldPromptID, "01JCCCCCCCCCCCCCCCCCCCCCC1"
	q := pq.QuoteIdentifier(schema)
	seedOldRows(db, q, 1, v1ID)
	db.MustExec(`INSERT INTO `+q+`.versions (prompt_id, version_number, id, content, metadata, created_at, variables, template_format)
		VALUES ($1, 1, $2, '{{a}}{{b}}', '{"input":{"schema":{"a":"string"}}}', now(), '{a,b}', 'dotprompt')`, promptID, v1ID)
	db.MustExec(`INSERT INTO `+q+`.environments (prompt_id, environment, version_number, updated_at) VALUES ($1, 'production', 1, now())`, promptID)
	is.NoErr(s.Migrate(ctx))
	v1, err := s.GetVersion(ctx, promptID, 1)
	is.NoErr(err)
	is.Equal(v1.Variables, []string{"a", "b"}) // stored before: the variables it had

	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: promptID, Content: "{{a}}{{b}}", Metadata: `{"input":{"schema":{"a":"string","b?":"string"}}}`})
	is.NoErr(err)
	var inputs []string
	is.NoErr(db.QueryRow(`SELECT inputs FROM `+q+`.versions WHERE prompt_id = $1 AND version_number = 2`, promptID).Scan((*pq.StringArray)(&inputs)))
	is.Equal(inputs, []string{"a\tstring\trequired\t{\"type\":\"string\"}", "b\tstring|null\toptional\t{\"type\":[\"string\",\"null\"]}"}) // stored with the version
	is.NoErr(db.QueryRow(`SELECT inputs FROM `+q+`.versions WHERE prompt_id = $1 AND version_number = 1`, promptID).Scan((*pq.StringArray)(&inputs)))
	is.Equal(inputs, []string{}) // none for the version stored before

	_, err = s.Activate(ctx, prompts.Activation{PromptID: promptID, Environment: prompts.Production, VersionNumber: prompts.Some(2)})
	is.True(errors.Is(err, prompts.ErrVariablesChanged)) // the old version types nothing: typing a and b is a change
	_, err = s.Activate(ctx, prompts.Activation{PromptID: promptID, Environment: prompts.Production, VersionNumber: prompts.Some(2),
		Change: prompts.Change{AllowVariableChange: true}})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: promptID, Content: "{{a}}{{b}}", Metadata: `{"input":{"schema":{"a":"integer","b?":"string"}}}`,
		Environments: []prompts.Environment{prompts.Production}})
	is.True(errors.Is(err, prompts.ErrVariablesChanged)) // from then on, compared
}

// TestInputsOfAnEarlierRelease: a version stored before the typed inputs
// held each property's whole schema keeps the entries it had (type and
// requiredness only); the promotion guard, comparing one with a version
// stored now, does not refuse what did not change, and refuses what did.
func TestInputsOfAnEarlierRelease(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := database(t)
	schema := freshSchema(t, db)
	s, err := sqlstore.New(db, sqlstore.WithSchema(schema))
	is.NoErr(err)
	defer s.Close()
	is.NoErr(s.Migrate(ctx))
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	const md = `{"input":{"schema":{"tags(array)":"string","n":"integer"}}}`
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{tags}}{{n}}", TemplateFormat: prompts.FormatDotprompt, Metadata: md,
		Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	q := pq.QuoteIdentifier(schema)
	db.MustExec(`UPDATE `+q+`.versions SET inputs = $2 WHERE prompt_id = $1`, p.ID, pq.StringArray{"n\tinteger\trequired", "tags\tarray\trequired"}) // as stored before
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{tags}}{{n}}", Metadata: md})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{tags}}{{n}}", Metadata: `{"input":{"schema":{"tags(array)":"string","n?":"integer"}}}`})
	is.NoErr(err)
	_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(3)})
	is.True(errors.Is(err, prompts.ErrVariablesChanged)) // n no longer required: refused
	_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2)})
	is.NoErr(err) // the same schema: not refused
	a, err := s.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.VersionNumber, 2)
	ds, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(len(ds), 2) // recorded once
}

// TestMigrateAPIKeys: migration 13 lets the log hold key events, and a
// webhook of every type made before it receives them, as one made after
// does; a webhook of some types does not.
func TestMigrateAPIKeys(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, db, schema := migratedTo(t, 12)
	// Two webhooks as a release before keys made them: routes for the
	// types it knew.
	q := pq.QuoteIdentifier(schema)
	const all, some = "01JWAAAAAAAAAAAAAAAAAAAAAA", "01JWBBBBBBBBBBBBBBBBBBBBBB"
	db.MustExec(`INSERT INTO `+q+`.webhooks VALUES ($1, 'https://hooks.example.com/all', '{}', NULL, $3, now()),
		($2, 'https://hooks.example.com/some', '{version.created}', NULL, $3, now())`, all, some, prompts.NewWebhookSecret())
	db.MustExec(`INSERT INTO `+q+`.webhook_routes SELECT t, '', $1 FROM unnest('{project.created,prompt.created,prompt.updated,version.created,deployment.created}'::text[]) t`, all)
	db.MustExec(`INSERT INTO `+q+`.webhook_routes VALUES ('version.created', '', $1)`, some)
	is.NoErr(s.Migrate(ctx))
	_, _, err := s.CreateKey(ctx, prompts.NewAPIKey{Name: "ci", Role: prompts.KeyRead, Creator: prompts.Grant{Role: prompts.KeyAdmin}})
	is.NoErr(err)
	ds, err := s.ClaimDeliveries(ctx, time.Now().Add(time.Minute), prompts.MaxLimit, time.Minute)
	is.NoErr(err)
	is.Equal(len(ds), 1) // to the webhook of every type only
	is.Equal(ds[0].Webhook.ID, all)
	is.Equal(ds[0].Event.Type, prompts.EventKeyCreated)
}

// TestMigrateSplits: migration 14 upgrades a schema holding what a
// release before splits wrote (environments, records of every action and
// their events): it all reads back as it was, without splits; the writes
// go on from it, splits included; and the row's check refuses what an
// older replica would do to an environment that holds a split: point it
// at another version without removing the split.
func TestMigrateSplits(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, db, schema := migratedTo(t, 13)
	q := pq.QuoteIdentifier(schema)
	const v1ID, v2ID, v3ID = "01JCCCCCCCCCCCCCCCCCCCCCC1", "01JCCCCCCCCCCCCCCCCCCCCCC2", "01JCCCCCCCCCCCCCCCCCCCCCC3"
	seedOldRows(db, q, 3, v3ID)
	db.MustExec(`INSERT INTO `+q+`.versions (prompt_id, version_number, id, content, created_at, variables)
		VALUES ($1, 1, $2, 'Hi {{name}}', now(), '{name}'), ($1, 2, $3, 'Hello {{name}}', now(), '{name}'), ($1, 3, $4, 'Hey {{name}}', now(), '{name}')`,
		oldPromptID, v1ID, v2ID, v3ID)
	db.MustExec(`INSERT INTO `+q+`.environments (prompt_id, environment, version_number, updated_at) VALUES ($1, 'production', 2, now())`, oldPromptID)
	// Records of the three actions there were: 1, then 2, in production;
	// 1 in staging, then none; and their events.
	db.MustExec(`INSERT INTO `+q+`.deployments (prompt_id, id, environment, action, version_number, previous_version_number, actor, reason, created_at) VALUES
		($1, '01JDDDDDDDDDDDDDDDDDDDDDD1', 'production', 'activate', 1, NULL, NULL, NULL, now()),
		($1, '01JDDDDDDDDDDDDDDDDDDDDDD2', 'staging', 'activate', 1, NULL, NULL, NULL, now()),
		($1, '01JDDDDDDDDDDDDDDDDDDDDDD3', 'production', 'rollback', 2, 1, 'ci', 'why', now()),
		($1, '01JDDDDDDDDDDDDDDDDDDDDDD4', 'staging', 'deactivate', NULL, 1, NULL, NULL, now())`, oldPromptID)
	db.MustExec(`UPDATE `+q+`.prompts SET latest_deployment_id = '01JDDDDDDDDDDDDDDDDDDDDDD4' WHERE id = $1`, oldPromptID)
	db.MustExec(`INSERT INTO `+q+`.events (id, type, project_id, prompt_id, created_at, deployment_id)
		SELECT row_number() OVER (ORDER BY d.id), 'deployment.created', $1, d.prompt_id, d.created_at, d.id FROM `+q+`.deployments d`, oldProjectID)
	db.MustExec(`SELECT setval('` + q + `.event_ids', 4)`)
	is.NoErr(s.Migrate(ctx))

	a, err := s.GetActive(ctx, oldPromptID, prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.ID, v2ID) // as it was
	is.Equal(a.Split, nil)             // without a split
	is.Equal(a.SplitVersions, nil)
	ds, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: oldPromptID})
	is.NoErr(err)
	is.Equal(len(ds), 4)
	for _, d := range ds {
		is.Equal(d.Split, nil) // none held one
		is.Equal(d.PreviousSplit, nil)
	}
	is.Equal(ds[0].Action, prompts.ActionDeactivate)
	is.Equal(*ds[1].PreviousVersionID, v1ID)
	is.Equal(*ds[1].Reason, "why")
	events, _, err := s.ListEvents(ctx, prompts.EventFilter{})
	is.NoErr(err)
	is.Equal(len(events), 4)
	is.Equal(*events[2].Deployment.VersionID, v2ID) // the old events read their records
	is.Equal(events[2].Deployment.Split, nil)

	// The writes go on: a split, over the old data's version.
	sp, err := s.Activate(ctx, prompts.Activation{PromptID: oldPromptID, Environment: prompts.Production, Split: split(3, 90, 2, 10)})
	is.NoErr(err) // the action split is accepted
	is.Equal(sp.ActiveVersion.ID, v3ID)
	is.Equal(len(sp.SplitVersions), 2)
	ds, _, err = s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: oldPromptID, Page: prompts.Page{Limit: 1}})
	is.NoErr(err)
	is.Equal(ds[0].Action, prompts.ActionSplit)
	is.Equal(*ds[0].PreviousVersionID, v2ID)
	// An older replica's activation of version 1 would set the number and
	// leave the split: refused.
	_, err = db.Exec(`UPDATE `+q+`.environments SET version_number = 1 WHERE prompt_id = $1 AND environment = 'production'`, oldPromptID)
	var pe *pq.Error
	is.True(errors.As(err, &pe))
	is.Equal(string(pe.Code), "23514") // check_violation
	// A rollback in staging goes back past the old deactivation.
	st, err := s.Rollback(ctx, prompts.Rollback{PromptID: oldPromptID, Environment: prompts.Staging})
	is.NoErr(err)
	is.Equal(st.ActiveVersion.ID, v1ID)
	// And back in production, to the old data's version.
	back, err := s.Rollback(ctx, prompts.Rollback{PromptID: oldPromptID, Environment: prompts.Production})
	is.NoErr(err)
	is.Equal(back.ActiveVersion.ID, v2ID)
	is.Equal(back.Split, nil)
	_, err = db.Exec(`INSERT INTO `+q+`.deployments (prompt_id, id, environment, action, created_at) VALUES ($1, '01JDDDDDDDDDDDDDDDDDDDDDD9', 'production', 'promote', now())`, oldPromptID)
	is.True(errors.As(err, &pe))
	is.Equal(string(pe.Code), "23514") // the actions are still checked
}
