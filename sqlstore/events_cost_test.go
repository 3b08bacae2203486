package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// rowsOf sums, over a plan's nodes that read the table, the rows they
// read: those they returned and those their filters removed, in every
// loop.
func rowsOf(node map[string]any, table string) float64 {
	var n float64
	if node["Relation Name"] == table {
		for _, k := range []string{"Actual Rows", "Rows Removed by Filter", "Rows Removed by Index Recheck"} {
			v, _ := node[k].(float64)
			n += v
		}
		loops, _ := node["Actual Loops"].(float64)
		n *= loops
	}
	children, _ := node["Plans"].([]any)
	for _, c := range children {
		n += rowsOf(c.(map[string]any), table)
	}
	return n
}

// The read of one project's events reads as many rows of the events table
// with 100,000 events of another project, before and after its own, as
// with none, in the custom plan and the generic one.
func TestEventsOfSomeProjectsReadTheirRowsOnly(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, conn, exec := explainSession(t)
	names, texts := sqlstore.Queries(s)
	var byProjects string
	for i, name := range names {
		if name == "ListEvents (projects)" {
			byProjects = texts[i]
		}
	}
	is.True(byProjects != "") // the statement of a read of some projects' events

	mine, err := s.CreateProject(ctx, prompts.NewProject{Name: "Mine"})
	is.NoErr(err)
	other, err := s.CreateProject(ctx, prompts.NewProject{Name: "Other"})
	is.NoErr(err)
	otherPrompt, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: other.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: otherPrompt.ID, Content: "v"})
	is.NoErr(err)
	mineN := 0
	addMine := func() {
		mineN++
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: mine.ID, Key: fmt.Sprint("k", mineN), Name: "K"})
		is.NoErr(err)
		for i := range 3 {
			_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: fmt.Sprint("v", i), Environments: []prompts.Environment{prompts.Production}})
			is.NoErr(err)
		}
	}
	addForeign := func(n int) {
		exec(fmt.Sprintf(`INSERT INTO {s}.events (id, type, project_id, prompt_id, created_at, version_number)
SELECT nextval('{s}.event_ids'::regclass), 'version.created', %s, %s, now(), 1 FROM generate_series(1, %d)`,
			pq.QuoteLiteral(other.ID), pq.QuoteLiteral(otherPrompt.ID), n))
		exec(`ANALYZE {s}.events`)
	}
	// rows returns the rows of events that reading every event of mine,
	// a page of limit at a time, reads, and the events' ids.
	rows := func(mode string, limit int) (float64, []int64) {
		t.Helper()
		exec(`DEALLOCATE ALL`)
		exec(`PREPARE events_test AS ` + byProjects)
		exec(`SET plan_cache_mode = ` + mode)
		defer exec(`RESET plan_cache_mode`)
		var total float64
		var ids []int64
		f := prompts.EventFilter{ProjectIDs: []string{mine.ID}, Limit: limit}
		for {
			var plan []byte
			err := conn.QueryRowxContext(ctx, fmt.Sprintf(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE events_test(%d, %d, ARRAY[%s])`,
				f.After, limit+1, pq.QuoteLiteral(mine.ID))).Scan(&plan)
			is.NoErr(err) // explain
			var doc []struct{ Plan map[string]any }
			is.NoErr(json.Unmarshal(plan, &doc))
			total += rowsOf(doc[0].Plan, "events")
			page, more, err := s.ListEvents(ctx, f)
			is.NoErr(err)
			for _, e := range page {
				is.Equal(e.ProjectID, mine.ID) // mine only
				ids = append(ids, e.ID)
			}
			if !more {
				return total, ids
			}
			f.After = page[len(page)-1].ID
		}
	}
	addMine()
	addMine()
	type result struct {
		rows float64
		ids  []int64
	}
	measure := func() map[string]result {
		out := map[string]result{}
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			for _, limit := range []int{2, 100} {
				n, ids := rows(mode, limit)
				out[fmt.Sprint(mode, limit)] = result{n, ids}
			}
		}
		return out
	}
	quiet := measure()
	addForeign(50000)
	addMine() // between the others'
	addForeign(50000)
	busy := measure()
	for k, r := range busy {
		is.Equal(len(r.ids), len(quiet[k].ids)+7) // a prompt and its versions more
		// The rows read grow with mine (7 more events, each read at
		// most twice: once in a page, once as the look past it), not
		// with the others'.
		t.Logf("%s: %v rows read without the others' events, %v with 100,000", k, quiet[k].rows, r.rows)
		is.True(r.rows <= quiet[k].rows+2*7+2)
	}
}
