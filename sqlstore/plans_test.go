package sqlstore_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/matryer/is"

	"github.com/promptkit/prompts/sqlstore"
)

var updatePlans = flag.Bool("update-plans", false, "write the query plans of TestQueryPlans to PLANS.md")

// explainSession returns a new Store and a session of its own on the
// database, for PREPARE and EXPLAIN, with exec, which runs a statement in
// that session with {s} read as the Store's schema.
func explainSession(t *testing.T) (*sqlstore.Store, *sqlx.Conn, func(sql string)) {
	t.Helper()
	s := newSQLStore(t)
	conn, err := database(t).Connx(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.ExecContext(context.Background(), strings.ReplaceAll(sql, "{s}", s.Schema())); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	return s, conn, exec
}

// TestQueryPlans fills a schema with 1,000 projects, 100,000 prompts,
// 100,000 versions, deployment records, events, deliveries and attempts,
// and checks that the
// plan of every statement of the Store reads through indexes, never a
// sequential scan of a table: both
// the custom plan PostgreSQL makes for the first executions of a prepared
// statement and the generic plan it may switch to after five. With
// -update-plans it writes the plans to PLANS.md.
func TestQueryPlans(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, conn, exec := explainSession(t)
	q := s.Schema()
	// Ids are 26 characters, like ULIDs, and increase with the series.
	exec(`INSERT INTO {s}.projects (id, name, slug, description, is_private, created_at)
SELECT '01' || lpad(i::text, 24, '0'), 'Project ' || i, 'project-' || i, '', false, now()
FROM generate_series(1, 1000) i`)
	// Prompt i is in project 1 + i % 1000 with key key-(i / 1000).
	exec(`INSERT INTO {s}.prompts (id, project_id, key, name, created_at, revision)
SELECT '02' || lpad(i::text, 24, '0'), '01' || lpad((1 + i % 1000)::text, 24, '0'), 'key-' || (i / 1000), 'Prompt ' || i, now(), 1
FROM generate_series(1, 100000) i`)
	// Prompts 1 to 1,000 have 100 versions each, the last active.
	exec(`INSERT INTO {s}.versions (prompt_id, version_number, id, content, metadata, created_at, variables)
SELECT '02' || lpad(i::text, 24, '0'), n, '03' || lpad((i * 1000 + n)::text, 24, '0'), 'content ' || n, '{"n":1}', now(), '{}'::text[]
FROM generate_series(1, 1000) i, generate_series(1, 100) n`)
	// One version in ten includes a partial.
	exec(`UPDATE {s}.versions SET partials = ARRAY['key-' || (version_number % 100)] WHERE version_number % 10 = 0`)
	exec(`UPDATE {s}.prompts SET version_count = 100, latest_version_id = '03' || lpad((substr(id, 3)::int * 1000 + 100)::text, 24, '0')
WHERE id <= '02' || lpad('1000', 24, '0')`)
	exec(`INSERT INTO {s}.environments (prompt_id, environment, version_number, updated_at)
SELECT '02' || lpad(i::text, 24, '0'), 'production', 100, now() FROM generate_series(1, 1000) i`)
	// One prompt in ten holds a split of versions 99 and 100 in staging.
	exec(`INSERT INTO {s}.environments (prompt_id, environment, version_number, split, updated_at)
SELECT '02' || lpad(i::text, 24, '0'), 'staging', 99, jsonb_build_array(
	jsonb_build_object('version_id', '03' || lpad((i * 1000 + 99)::text, 24, '0'), 'version_number', 99, 'weight', 90),
	jsonb_build_object('version_id', '03' || lpad((i * 1000 + 100)::text, 24, '0'), 'version_number', 100, 'weight', 10)), now()
FROM generate_series(1, 1000, 10) i`)
	exec(`INSERT INTO {s}.idempotency (id, op, request, prompt_id, version_id, version_number, created_at)
SELECT sha256(('key-' || i)::bytea), 'create_version', 'req', '02' || lpad(i::text, 24, '0'), '03' || lpad(i::text, 24, '0'), 1, now() - i * interval '1 second'
FROM generate_series(1, 100000) i`)
	// 100,000 deployment records, 100 for each of the 1,000 prompts with
	// versions; and the records of the splits above.
	exec(`INSERT INTO {s}.deployments (prompt_id, id, environment, action, version_number, previous_version_number, created_at)
SELECT '02' || lpad(i::text, 24, '0'), '04' || lpad((i * 1000 + n)::text, 24, '0'), 'production', 'activate', n, NULLIF(n - 1, 0), now()
FROM generate_series(1, 1000) i, generate_series(1, 100) n`)
	exec(`INSERT INTO {s}.deployments (prompt_id, id, environment, action, version_number, split, created_at)
SELECT e.prompt_id, '05' || substr(e.prompt_id, 3), 'staging', 'split', 99, e.split, now() FROM {s}.environments e WHERE e.split IS NOT NULL`)
	// 100,000 events, versions of the prompts above; 1,000 webhooks, each
	// on a project of its own, and 10 on all; 100,000 deliveries, one in
	// a hundred due, the others an hour away; 100,000 attempts.
	exec(`INSERT INTO {s}.events (id, type, project_id, prompt_id, created_at, version_number)
SELECT i, 'version.created', '01' || lpad((1 + (1 + i % 1000) % 1000)::text, 24, '0'), '02' || lpad((1 + i % 1000)::text, 24, '0'),
	now() - (100000 - i) * interval '1 second', 1 + i % 100
FROM generate_series(1, 100000) i`)
	exec(`INSERT INTO {s}.webhooks (id, url, events, project_ids, secret, created_at)
SELECT '05' || lpad(i::text, 24, '0'), 'https://hooks.example.com/' || i, '{}',
	CASE WHEN i <= 1000 THEN ARRAY['01' || lpad(i::text, 24, '0')] END, 'whsec_x', now()
FROM generate_series(1, 1010) i`)
	exec(`INSERT INTO {s}.webhook_routes (event_type, project_id, webhook_id)
SELECT t, COALESCE(w.project_ids[1], ''), w.id FROM {s}.webhooks w,
	unnest(ARRAY['project.created', 'prompt.created', 'prompt.updated', 'version.created', 'deployment.created']) t`)
	exec(`INSERT INTO {s}.deliveries (webhook_id, event_id, queued_at, next_at)
SELECT '05' || lpad((1 + i % 1000)::text, 24, '0'), i, now(), now() + CASE WHEN i % 100 = 0 THEN interval '-1 minute' ELSE interval '1 hour' END
FROM generate_series(1, 100000) i`)
	exec(`INSERT INTO {s}.delivery_attempts (id, webhook_id, event_id, attempt, at, status_code, error, duration)
SELECT '06' || lpad(i::text, 24, '0'), '05' || lpad((1 + i % 1000)::text, 24, '0'), i, 1, now(), 200, '', 1000000
FROM generate_series(1, 100000) i`)
	// 2,000 environments of projects: canary and eu in each.
	exec(`INSERT INTO {s}.project_environments (project_id, name, protected, created_at)
SELECT '01' || lpad(i::text, 24, '0'), n, n = 'eu', now() FROM generate_series(1, 1000) i, unnest(ARRAY['canary', 'eu']) n`)
	exec(`ANALYZE {s}.projects, {s}.prompts, {s}.versions, {s}.environments, {s}.idempotency, {s}.deployments, {s}.project_environments,
	{s}.events, {s}.webhooks, {s}.webhook_routes, {s}.deliveries, {s}.delivery_attempts`)

	project := func(i int) string { return fmt.Sprintf("'01%024d'", i) }
	prompt := func(i int) string { return fmt.Sprintf("'02%024d'", i) }
	version := func(i, n int) string { return fmt.Sprintf("'03%024d'", i*1000+n) }
	webhook := func(i int) string { return fmt.Sprintf("'05%024d'", i) }
	const now, micros = "'2026-11-21T22:19:26.123456Z'", "1763763566123456"
	const cutoff = "'2026-11-14T22:19:26.123456Z'" // the retention's
	args := map[string]string{
		"CreateProject":                             "'04000000000000000000000001', 'New', 'new', '', false, " + now + ", " + cutoff,
		"GetProject":                                project(8),
		"ListProjects":                              "'', 101",
		"ListProjects (ids)":                        "ARRAY[" + project(8) + ", " + project(9) + "], '', 101",
		"CreatePrompt":                              "'04000000000000000000000002', " + project(8) + ", 'new', 'New', NULL, " + now + ", " + micros + `, true, '{"id": "x"}', ` + cutoff,
		"GetPrompt":                                 prompt(7),
		"UpdatePrompt":                              prompt(7) + ", true, 'key-new', false, '', true, NULL, " + micros + ", " + now + ", " + cutoff,
		"ListPrompts":                               prompt(90000) + ", 101",
		"ListPrompts (one project)":                 project(8) + ", " + prompt(50000) + ", 101",
		"ListPrompts (several projects)":            "ARRAY[" + project(8) + ", " + project(9) + ", " + project(10) + "], " + prompt(50000) + ", 101",
		"ListPrompts (key)":                         "'key-7', " + prompt(7000) + ", 101",
		"ListPrompts (key in projects)":             "'key-7', ARRAY[" + project(8) + ", " + project(9) + "], '', 101",
		"CreateVersion":                             prompt(7) + ", '04000000000000000000000003', 'c', NULL, NULL, " + now + ", " + micros + ", ARRAY['name'], true, " + cutoff + ", 'plain', 'plain', '{}', ARRAY['key-3']",
		"CreateVersion (retry under the lock)":      prompt(7) + ", '04000000000000000000000003', ARRAY['canary', 'eu']",
		"GetVersion":                                prompt(7) + ", 50",
		"ListVersions":                              prompt(7) + ", " + version(7, 50) + ", 101",
		"GetActive":                                 prompt(7) + ", 'production'",
		"GetActiveByKey":                            project(8) + ", 'key-0', 'production'",
		"Activate, Deactivate (lock)":               prompt(7) + ", 'production', 'version', 3, NULL, true, NULL, NULL",
		"CreateVersion, Rollback (partials' locks)": prompt(7) + ", ARRAY['key-1', 'key-2']",
		"Activate, Rollback, CreateVersion (partials guard)": project(8) + ", 'production', ARRAY['key-1', 'key-2']",
		"Activate (point)":                               prompt(7) + ", 'staging', NULL, " + version(7, 3) + ", " + micros + ", " + now + ", '04000000000000000000000004', 'activate', 'ci', NULL, true, true, false",
		"Deactivate (clear)":                             prompt(7) + ", 'production', " + micros + ", '04000000000000000000000004', 'ci', NULL, " + now + ", false",
		"Rollback (target)":                              prompt(7) + ", 'staging'",
		"ListDeployments":                                prompt(7) + ", '~', 101",
		"ListDeployments (one environment)":              prompt(7) + ", '~', 101, 'production'",
		"Idempotency (claim)":                            "sha256('key-7'), 'create_version', 'req', " + now + ", " + now,
		"Idempotency (replay)":                           "sha256('key-7')",
		"Idempotency (save)":                             "sha256('key-7'), " + prompt(7) + ", " + version(7, 3) + ", 3, NULL",
		"Idempotency (expire)":                           now,
		"Events (append, at a transaction's end)":        "ARRAY['version.created', 'deployment.created'], ARRAY[" + project(8) + ", " + project(8) + "], ARRAY[" + prompt(7) + ", " + prompt(7) + "], ARRAY['', ''], ARRAY[3, 0], ARRAY['', '04000000000000000000000004'], ARRAY[" + now + ", " + now + "]::timestamptz[], " + cutoff,
		"ListEvents":                                     "50000, 101",
		"ListEvents (projects)":                          "50000, 101, ARRAY[" + project(8) + ", " + project(9) + "]",
		"LastEventID":                                    "",
		"CreateWebhook":                                  "'04000000000000000000000005', 'https://example.com/', '{}', ARRAY[" + project(8) + "], 'whsec_x', " + now + ", ARRAY['project.created', 'prompt.created']",
		"GetWebhook":                                     webhook(7),
		"ListWebhooks":                                   webhook(500) + ", 101",
		"DeleteWebhook":                                  webhook(7),
		"ListDeliveryAttempts":                           webhook(7) + ", '~', 101",
		"ClaimDeliveries":                                "now(), 16, now() + interval '30 seconds', now() - interval '7 days'",
		"ListEnvironments":                               project(8),
		"PutEnvironment":                                 project(8) + ", 'canary', true, " + now,
		"PutEnvironment (protection)":                    project(8) + ", 'canary', true",
		"GetActive (environment)":                        prompt(7) + ", 'canary'",
		"GetActiveByKey (environment)":                   project(8) + ", 'canary'",
		"PutEnvironment, DeleteEnvironment (lock)":       project(8) + ", 'canary'",
		"DeleteEnvironment (in use)":                     project(8) + ", 'canary'",
		"DeleteEnvironment":                              project(8) + ", 'canary'",
		"FinishDelivery":                                 "5000, '04000000000000000000000006', " + now + ", 503, '', 1000000, " + now + ", " + cutoff,
		"GetActive, GetActiveByKey (a split's versions)": prompt(7) + ", ARRAY[3, 4]",
		"Activate, Rollback (a split's versions)":        prompt(7) + ", ARRAY[3, 4], ARRAY[" + version(7, 5) + "]",
		"Activate, Rollback, CreateVersion (to or from a split: the state)": prompt(7) + ", 'production'",
		"Activate, Rollback, CreateVersion (to or from a split: hold)":      prompt(7) + ", 'production', 3, '[{\"version_id\": \"x\", \"version_number\": 3, \"weight\": 1}, {\"version_id\": \"y\", \"version_number\": 4, \"weight\": 1}]', " + now + ", '04000000000000000000000004', 'split', 100, NULL, 'ci', NULL, true, " + micros,
	}

	// The statements whose branches an argument picks: the plans of the
	// other branches too.
	moreArgs := map[string][]struct{ branch, arg string }{
		"Activate, Deactivate (lock)": {
			{"a split", prompt(7) + ", 'production', 'split', NULL, NULL, true, ARRAY[3, 4], ARRAY[" + version(7, 5) + "]"},
			{"a rollback", prompt(7) + ", 'staging', 'rollback', NULL, NULL, true, NULL, NULL"},
		},
	}

	var doc strings.Builder
	doc.WriteString(plansHeader)
	names, texts := sqlstore.Queries(s)
	type run struct{ name, text, branch, arg string }
	var runs []run
	for i, name := range names {
		arg, ok := args[name]
		if !ok {
			t.Fatalf("no arguments for statement %s", name)
		}
		runs = append(runs, run{name, texts[i], "", arg})
		for _, m := range moreArgs[name] {
			runs = append(runs, run{name, texts[i], m.branch, m.arg})
		}
	}
	for _, r := range runs {
		name, arg := r.name, r.arg
		if r.branch != "" {
			name += ", " + r.branch
		}
		exec(`DEALLOCATE ALL`)
		exec(`PREPARE plan_test AS ` + r.text)
		var plans [2]string
		execute := "EXECUTE plan_test"
		if arg != "" {
			execute += "(" + arg + ")"
		}
		for j, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			exec(`SET plan_cache_mode = ` + mode)
			var lines []string
			is.NoErr(conn.SelectContext(ctx, &lines, `EXPLAIN (COSTS OFF) `+execute)) // explain
			plans[j] = strings.Join(lines, "\n")
			scans := strings.Contains(plans[j], "Scan")
			if strings.Contains(plans[j], "Seq Scan") || scans && !strings.Contains(plans[j], "Index") {
				t.Errorf("%s, %s: not on indexes:\n%s", name, mode, plans[j])
			}
		}
		// As the default schema shows them.
		shown := strings.NewReplacer(`"`+q+`"`, "prompts", sqlstore.Channel(q), sqlstore.Channel(sqlstore.DefaultSchema),
			strconv.FormatInt(sqlstore.EventLockKey(q), 10), strconv.FormatInt(sqlstore.EventLockKey(sqlstore.DefaultSchema), 10))
		plans[0], plans[1] = shown.Replace(plans[0]), shown.Replace(plans[1])
		if r.branch == "" {
			fmt.Fprintf(&doc, "## %s\n\n```sql\n%s\n```\n\n", name, shown.Replace(r.text))
		} else {
			fmt.Fprintf(&doc, "## %s\n\nThe statement above.\n\n", name)
		}
		if plans[0] == plans[1] {
			fmt.Fprintf(&doc, "Plan (custom and generic alike), for `EXECUTE (%s)`:\n\n```\n%s\n```\n\n", arg, plans[0])
		} else {
			fmt.Fprintf(&doc, "Custom plan, for `EXECUTE (%s)`:\n\n```\n%s\n```\n\nGeneric plan:\n\n```\n%s\n```\n\n", arg, plans[0], plans[1])
		}
	}
	exec(`RESET plan_cache_mode`)
	exec(`DEALLOCATE ALL`)
	if *updatePlans {
		is.NoErr(os.WriteFile("PLANS.md", []byte(doc.String()), 0o644)) // write PLANS.md
	}
}

const plansHeader = `# Query plans

The plans PostgreSQL 15 makes for every statement of sqlstore, on a schema
holding 1,000 projects, 100,000 prompts (100 per project, 1,000 per key) and
100,000 versions and deployment records (100 for each of 1,000 prompts; 100
of those hold a split in staging),
100,000 idempotency records, 100,000 events, 1,010 webhooks, 100,000 deliveries (1,000 due)
and 100,000 delivery attempts, analyzed. The statements
are prepared, so both plans matter: the custom plan PostgreSQL makes for the
first five executions with the actual arguments, and the generic plan it may
use after that. Every one reads through an index: no statement scans a
table. Lists start at the page's position in an index (keyset paging: ` + "`id > $after ORDER BY id LIMIT n+1`" + `),
so a page deep in the list costs what the first page costs; the examples
below ask for deep pages.

Generated by TestQueryPlans, which fails if a plan has a sequential scan:

    PROMPTS_TEST_DATABASE_URL=postgres://... go test ./sqlstore -run TestQueryPlans -update-plans

Schema names, the channel the writes notify on and the key of the event
log's lock are shown as the default schema's, ` + "`prompts`" + `.

`
