package sqlstore_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/sqlstore"
)

var updatePlans = flag.Bool("update-plans", false, "write the query plans of TestQueryPlans to PLANS.md")

// TestQueryPlans fills a schema with 1,000 projects, 100,000 prompts and
// 100,000 versions, and checks that the plan of every statement of the
// Store reads through indexes, never a sequential scan of a table: both
// the custom plan PostgreSQL makes for the first executions of a prepared
// statement and the generic plan it may switch to after five. With
// -update-plans it writes the plans to PLANS.md.
func TestQueryPlans(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := newSQLStore(t)
	q := s.Schema()
	conn, err := database(t).Connx(ctx)
	is.NoErr(err) // a session for PREPARE and EXPLAIN
	defer conn.Close()
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, strings.ReplaceAll(sql, "{s}", q)); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
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
	exec(`UPDATE {s}.prompts SET version_count = 100, latest_version_id = '03' || lpad((substr(id, 3)::int * 1000 + 100)::text, 24, '0')
WHERE id <= '02' || lpad('1000', 24, '0')`)
	exec(`INSERT INTO {s}.environments (prompt_id, environment, version_number, updated_at)
SELECT '02' || lpad(i::text, 24, '0'), 'production', 100, now() FROM generate_series(1, 1000) i`)
	exec(`INSERT INTO {s}.idempotency (id, op, request, prompt_id, version_id, version_number, created_at)
SELECT sha256(('key-' || i)::bytea), 'create_version', 'req', '02' || lpad(i::text, 24, '0'), '03' || lpad(i::text, 24, '0'), 1, now() - i * interval '1 second'
FROM generate_series(1, 100000) i`)
	exec(`ANALYZE {s}.projects, {s}.prompts, {s}.versions, {s}.environments, {s}.idempotency`)

	project := func(i int) string { return fmt.Sprintf("'01%024d'", i) }
	prompt := func(i int) string { return fmt.Sprintf("'02%024d'", i) }
	version := func(i, n int) string { return fmt.Sprintf("'03%024d'", i*1000+n) }
	const now, micros = "'2026-11-21T22:19:26.123456Z'", "1763763566123456"
	args := map[string]string{
		"CreateProject":                        "'04000000000000000000000001', 'New', 'new', '', false, " + now,
		"GetProject":                           project(8),
		"ListProjects":                         "'', 101",
		"ListProjects (ids)":                   "ARRAY[" + project(8) + ", " + project(9) + "], '', 101",
		"CreatePrompt":                         "'04000000000000000000000002', " + project(8) + ", 'new', 'New', NULL, " + now + ", " + micros,
		"GetPrompt":                            prompt(7),
		"UpdatePrompt":                         prompt(7) + ", true, 'key-new', false, '', true, NULL, " + micros,
		"ListPrompts":                          prompt(90000) + ", 101",
		"ListPrompts (one project)":            project(8) + ", " + prompt(50000) + ", 101",
		"ListPrompts (several projects)":       "ARRAY[" + project(8) + ", " + project(9) + ", " + project(10) + "], " + prompt(50000) + ", 101",
		"ListPrompts (key)":                    "'key-7', " + prompt(7000) + ", 101",
		"ListPrompts (key in projects)":        "'key-7', ARRAY[" + project(8) + ", " + project(9) + "], '', 101",
		"CreateVersion":                        prompt(7) + ", '04000000000000000000000003', 'c', NULL, NULL, " + now + ", " + micros + ", ARRAY['name']",
		"CreateVersion (retry under the lock)": prompt(7) + ", '04000000000000000000000003'",
		"GetVersion":                           prompt(7) + ", 50",
		"ListVersions":                         prompt(7) + ", " + version(7, 50) + ", 101",
		"GetActive":                            prompt(7) + ", 'production'",
		"GetActiveByKey":                       project(8) + ", 'key-0', 'production'",
		"Activate, Deactivate (lock)":          prompt(7),
		"Activate (point)":                     prompt(7) + ", 'staging', NULL, " + version(7, 3) + ", " + micros + ", " + now + ", '04000000000000000000000004', 'activate', 'ci', NULL, true, true, false",
		"Deactivate (clear)":                   prompt(7) + ", 'staging', " + micros + ", '04000000000000000000000004', 'ci', NULL, " + now,
		"Rollback (target)":                    prompt(7) + ", 'staging'",
		"ListDeployments":                      prompt(7) + ", '~', 101",
		"ListDeployments (one environment)":    prompt(7) + ", '~', 101, 'production'",
		"Idempotency (claim)":                  "sha256('key-7'), 'create_version', 'req', " + now + ", " + now,
		"Idempotency (replay)":                 "sha256('key-7')",
		"Idempotency (save)":                   "sha256('key-7'), " + prompt(7) + ", " + version(7, 3) + ", 3, NULL",
		"Idempotency (expire)":                 now,
	}

	var doc strings.Builder
	doc.WriteString(plansHeader)
	names, texts := sqlstore.Queries(s)
	for i, name := range names {
		arg, ok := args[name]
		if !ok {
			t.Fatalf("no arguments for statement %s", name)
		}
		exec(`DEALLOCATE ALL`)
		exec(`PREPARE plan_test AS ` + texts[i])
		var plans [2]string
		for j, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			exec(`SET plan_cache_mode = ` + mode)
			var lines []string
			is.NoErr(conn.SelectContext(ctx, &lines, `EXPLAIN (COSTS OFF) EXECUTE plan_test(`+arg+`)`)) // explain
			plans[j] = strings.Join(lines, "\n")
			scans := strings.Contains(plans[j], "Scan")
			if strings.Contains(plans[j], "Seq Scan") || scans && !strings.Contains(plans[j], "Index") {
				t.Errorf("%s, %s: not on indexes:\n%s", name, mode, plans[j])
			}
		}
		fmt.Fprintf(&doc, "## %s\n\n```sql\n%s\n```\n\n", name, strings.ReplaceAll(texts[i], `"`+q+`"`, "prompts"))
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
100,000 versions (100 for each of 1,000 prompts) and 100,000 idempotency
records, analyzed. The statements
are prepared, so both plans matter: the custom plan PostgreSQL makes for the
first five executions with the actual arguments, and the generic plan it may
use after that. Every one reads through an index: no statement scans a
table. Lists start at the page's position in an index (keyset paging: ` + "`id > $after ORDER BY id LIMIT n+1`" + `),
so a page deep in the list costs what the first page costs; the examples
below ask for deep pages.

Generated by TestQueryPlans, which fails if a plan has a sequential scan:

    PROMPTS_TEST_DATABASE_URL=postgres://... go test ./sqlstore -run TestQueryPlans -update-plans

Schema names are shown as ` + "`prompts`" + `, the default.

`
