package sqlstore

// The statements of the Store, prepared on first use. {s} stands for the
// quoted schema. Every statement is one round trip once prepared on a
// connection. Each list shape has its own statement, with conditions an
// index answers, rather than one statement with optional conditions ($1 IS
// NULL OR ...) that a generic plan could not put on an index.

type query int

const (
	qCreateProject query = iota
	qGetProject
	qListProjects
	qListProjectsByIDs
	qCreatePrompt
	qGetPrompt
	qUpdatePrompt
	qListPrompts
	qListPromptsByProject
	qListPromptsByProjects
	qListPromptsByKey
	qListPromptsByKeyInProjects
	qCreateVersion
	qLockPrompt
	qGetVersion
	qListVersions
	qGetActive
	qGetActiveByKey
	qLockEnvironments
	qPointEnvironment
	qClearEnvironment
	qRollbackTarget
	qListDeployments
	qListDeploymentsByEnvironment
	qClaimIdempotency
	qGetIdempotency
	qSaveIdempotency
	qExpireIdempotency
	numQueries
)

const (
	projectCols = `id, name, slug, description, is_private, created_at`
	promptCols  = `p.id, p.project_id, p.key, p.name, p.description, p.latest_version_id, p.created_at, p.revision`
	versionCols = `v.id, v.version_number, v.content, v.change_summary, v.metadata, v.created_at, v.variables`
	// versionColsW are versionCols of the versions table aliased w, in
	// subqueries whose result is v.
	versionColsW = `w.id, w.version_number, w.content, w.change_summary, w.metadata, w.created_at, w.variables`
	// deploymentCols are a record's columns, with the ids of its versions.
	deploymentCols = `d.id, d.environment, d.action, v.id, d.version_number, pv.id, d.previous_version_number, d.actor, d.reason, d.created_at`
	// nextRevision is prompts.NextRevision of the row's revision at the
	// time $8.
	nextRevision = `GREATEST(p.revision + 1, $8::bigint)`
)

// queryText returns the statements' text, {s} standing for the schema.
func queryText() [numQueries]string {
	return [numQueries]string{
		qCreateProject: `INSERT INTO {s}.projects (` + projectCols + `) VALUES ($1, $2, $3, $4, $5, $6)`,

		qGetProject: `SELECT ` + projectCols + ` FROM {s}.projects WHERE id = $1`,

		qListProjects: `SELECT ` + projectCols + ` FROM {s}.projects
WHERE id > $1 ORDER BY id LIMIT $2`,

		qListProjectsByIDs: `SELECT ` + projectCols + ` FROM {s}.projects
WHERE id = ANY($1::text[]) AND id > $2 ORDER BY id LIMIT $3`,

		// Inserts nothing when the project does not exist.
		qCreatePrompt: `INSERT INTO {s}.prompts (id, project_id, key, name, description, created_at, revision)
SELECT $1::text, j.id, $3::text, $4::text, $5::text, $6::timestamptz, $7::bigint
FROM {s}.projects j WHERE j.id = $2`,

		qGetPrompt: `SELECT ` + promptCols + ` FROM {s}.prompts p WHERE p.id = $1`,

		// $2, $4, $6: whether to set key, name, description. The revision
		// moves on (to at least $8, the time) only when a value changes; in
		// SET, p's columns are the row's values before the update.
		qUpdatePrompt: `UPDATE {s}.prompts p SET
	key = CASE WHEN $2::boolean THEN $3::text ELSE p.key END,
	name = CASE WHEN $4::boolean THEN $5::text ELSE p.name END,
	description = CASE WHEN $6::boolean THEN $7::text ELSE p.description END,
	revision = CASE WHEN ($2::boolean AND p.key IS DISTINCT FROM $3::text)
		OR ($4::boolean AND p.name IS DISTINCT FROM $5::text)
		OR ($6::boolean AND p.description IS DISTINCT FROM $7::text)
		THEN ` + nextRevision + ` ELSE p.revision END
WHERE p.id = $1 AND pg_notify({channel}, p.id || ' ' || p.project_id) IS NOT NULL
RETURNING ` + promptCols,

		qListPrompts: `SELECT ` + promptCols + ` FROM {s}.prompts p
WHERE p.id > $1 ORDER BY p.id LIMIT $2`,

		qListPromptsByProject: `SELECT ` + promptCols + ` FROM {s}.prompts p
WHERE p.project_id = $1 AND p.id > $2 ORDER BY p.id LIMIT $3`,

		// One index range per project, each at most a page long, merged.
		qListPromptsByProjects: `SELECT ` + promptCols + ` FROM unnest($1::text[]) AS j(id)
CROSS JOIN LATERAL (
	SELECT q.id, q.project_id, q.key, q.name, q.description, q.latest_version_id, q.created_at, q.revision
	FROM {s}.prompts q
	WHERE q.project_id = j.id AND q.id > $2 ORDER BY q.id LIMIT $3
) p
ORDER BY p.id LIMIT $3`,

		qListPromptsByKey: `SELECT ` + promptCols + ` FROM {s}.prompts p
WHERE p.key = $1 AND p.id > $2 ORDER BY p.id LIMIT $3`,

		qListPromptsByKeyInProjects: `SELECT ` + promptCols + ` FROM {s}.prompts p
WHERE p.key = $1 AND p.project_id = ANY($2::text[]) AND p.id > $3 ORDER BY p.id LIMIT $4`,

		// The next version, in one statement: take the prompt's row lock by
		// counting the version (writers of one prompt queue here; under READ
		// COMMITTED a waiting writer re-checks the condition on the row as the
		// previous writer left it), insert the version under that number, and
		// activate it in the environments $7, moving the revision on (to at
		// least $8, the time). Nothing happens, and no row returns, when the
		// prompt does not exist or when its latest version id is not below $2,
		// the new id: then CreateVersion retries under a lock.
		qCreateVersion: `WITH p AS (
	UPDATE {s}.prompts
	SET version_count = version_count + 1, latest_version_id = $2, revision = GREATEST(revision + 1, $7::bigint)
	WHERE id = $1 AND (latest_version_id IS NULL OR latest_version_id < $2)
		AND pg_notify({channel}, id || ' ' || project_id) IS NOT NULL
	RETURNING id, version_count
)
INSERT INTO {s}.versions (prompt_id, version_number, id, content, change_summary, metadata, created_at, variables)
SELECT p.id, p.version_count, $2::text, $3::text, $4::text, $5::json, $6::timestamptz, $8::text[] FROM p
RETURNING version_number`,

		// In a transaction, before qCreateVersion: lock the prompt, read its
		// latest version and deployment ids, and find the version with id $2
		// if an earlier attempt of this very call stored it.
		qLockPrompt: `SELECT p.latest_version_id, p.latest_deployment_id, v.version_number
FROM {s}.prompts p
LEFT JOIN {s}.versions v ON v.prompt_id = p.id AND v.id = $2
WHERE p.id = $1 AND pg_notify({channel}, p.id || ' ' || p.project_id) IS NOT NULL
FOR UPDATE OF p`,

		// One row when the prompt exists; the version's columns are NULL when the
		// number is unknown.
		qGetVersion: `SELECT ` + versionCols + `
FROM {s}.prompts p
LEFT JOIN {s}.versions v ON v.prompt_id = p.id AND v.version_number = $2
WHERE p.id = $1`,

		// Newest first, from below $2. At least one row when the prompt exists
		// (NULL columns when the page is empty).
		qListVersions: `SELECT ` + versionCols + `
FROM {s}.prompts p
LEFT JOIN LATERAL (
	SELECT ` + versionColsW + ` FROM {s}.versions w
	WHERE w.prompt_id = p.id AND w.id < $2 ORDER BY w.id DESC LIMIT $3
) v ON true
WHERE p.id = $1
ORDER BY v.id DESC`,

		// GetActive: the prompt, the environment's pointer and the version, in one
		// row by three primary-key lookups.
		qGetActive: `SELECT ` + promptCols + `, ` + versionCols + `
FROM {s}.prompts p
LEFT JOIN {s}.environments d ON d.prompt_id = p.id AND d.environment = $2
LEFT JOIN {s}.versions v ON v.prompt_id = d.prompt_id AND v.version_number = d.version_number
WHERE p.id = $1`,

		// No row: the project is unknown; a row of NULLs: the key is.
		qGetActiveByKey: `SELECT ` + promptCols + `, ` + versionCols + `
FROM {s}.projects j
LEFT JOIN {s}.prompts p ON p.project_id = j.id AND p.key = $2
LEFT JOIN {s}.environments d ON d.prompt_id = p.id AND d.environment = $3
LEFT JOIN {s}.versions v ON v.prompt_id = d.prompt_id AND v.version_number = d.version_number
WHERE j.id = $1`,

		// In a transaction: lock the prompt's row (the writers of one prompt
		// take turns there, as CreateVersion's do), and read the prompt's
		// revision, the number of the version environment $2 points at, and
		// the number of the version with number $3 or id $4 (NULL when there
		// is none). No row: the prompt is unknown.
		// The first statement of a transaction that changes the prompt's
		// environments: lock the prompt's row, and read its revision (for the
		// caller's precondition) and its latest deployment id (to make the
		// next). The statements after it read the environments afresh: under
		// READ COMMITTED each statement sees what was committed when it
		// began, so a writer that waited here sees the change of the writer
		// it waited for.
		qLockEnvironments: `SELECT revision, latest_deployment_id FROM {s}.prompts
WHERE id = $1 AND pg_notify({channel}, id || ' ' || project_id) IS NOT NULL FOR UPDATE`,

		// Under that lock: point environment $2 at the version numbered $3
		// or with id $4, unless it points there already, or $12 (the change's
		// precondition holds) is false, or the promotion guard refuses (the
		// version active now has other variables and $13, allow, is false);
		// then record the change (id $7, action $8, actor $9, reason $10, at
		// $6) and, unless $11 is false, move the revision on to at least $5.
		// Answers whether the version exists, whether anything changed,
		// whether the guard refused, and the variables of the version asked
		// for and of the active one, for the guard's error.
		qPointEnvironment: `WITH t AS (
	SELECT v.version_number, v.variables FROM {s}.versions v
	WHERE v.prompt_id = $1 AND (v.version_number = $3::integer OR v.id = $4::text)
), cur AS (
	SELECT e.version_number, c.variables FROM {s}.environments e
	JOIN {s}.versions c ON c.prompt_id = e.prompt_id AND c.version_number = e.version_number
	WHERE e.prompt_id = $1 AND e.environment = $2
), point AS (
	INSERT INTO {s}.environments AS e (prompt_id, environment, version_number, updated_at)
	SELECT $1, $2, t.version_number, $6::timestamptz FROM t
	WHERE $12::boolean AND ($13::boolean OR NOT EXISTS (SELECT 1 FROM cur) OR t.variables = (SELECT variables FROM cur))
	ON CONFLICT (prompt_id, environment) DO UPDATE
	SET version_number = excluded.version_number, updated_at = excluded.updated_at
	WHERE e.version_number <> excluded.version_number
	RETURNING version_number
), rec AS (
	INSERT INTO {s}.deployments (prompt_id, id, environment, action, version_number, previous_version_number, actor, reason, created_at)
	SELECT $1, $7::text, $2, $8::text, point.version_number, (SELECT version_number FROM cur), $9::text, $10::text, $6::timestamptz
	FROM point
), p AS (
	UPDATE {s}.prompts
	SET revision = CASE WHEN $11::boolean THEN GREATEST(revision + 1, $5::bigint) ELSE revision END, latest_deployment_id = $7::text
	WHERE id = $1 AND EXISTS (SELECT 1 FROM point)
)
SELECT EXISTS (SELECT 1 FROM t), EXISTS (SELECT 1 FROM point),
	EXISTS (SELECT 1 FROM t, cur WHERE $12::boolean AND NOT $13::boolean AND t.variables <> cur.variables),
	(SELECT variables FROM t), (SELECT variables FROM cur)`,

		// Under that lock: point environment $2 at no version; when it
		// pointed at one, record the change (id $4, actor $5, reason $6, at
		// $7) and move the revision on to at least $3.
		qClearEnvironment: `WITH clear AS (
	DELETE FROM {s}.environments WHERE prompt_id = $1 AND environment = $2
	RETURNING version_number
), rec AS (
	INSERT INTO {s}.deployments (prompt_id, id, environment, action, version_number, previous_version_number, actor, reason, created_at)
	SELECT $1, $4::text, $2, 'deactivate', NULL, clear.version_number, $5::text, $6::text, $7::timestamptz
	FROM clear
), p AS (
	UPDATE {s}.prompts SET revision = GREATEST(revision + 1, $3::bigint), latest_deployment_id = $4::text
	WHERE id = $1 AND EXISTS (SELECT 1 FROM clear)
)
SELECT EXISTS (SELECT 1 FROM clear)`,

		// Under that lock: the version environment $2 pointed at before its
		// latest change. No row when it has no record.
		// qClaimIdempotency takes the key $1 (the RecordKey of the
		// Idempotency) for this transaction: a new record, or one past its
		// retention (created before $5) taken over; no row when a live
		// record holds it. A record another transaction has written and not
		// yet committed makes it wait for that transaction's end.
		qClaimIdempotency: `INSERT INTO {s}.idempotency AS i (id, op, request, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (id) DO UPDATE SET op = EXCLUDED.op, request = EXCLUDED.request, created_at = EXCLUDED.created_at,
				prompt_id = NULL, version_id = NULL, version_number = NULL, environment = NULL
			WHERE i.created_at < $5
			RETURNING true`,

		qGetIdempotency: `SELECT op, request, prompt_id, version_id, version_number, environment, created_at FROM {s}.idempotency WHERE id = $1`,

		// qSaveIdempotency records what the write made or changed.
		qSaveIdempotency: `UPDATE {s}.idempotency SET prompt_id = $2, version_id = $3, version_number = $4, environment = $5 WHERE id = $1`,

		// qExpireIdempotency removes up to 16 records created before $1.
		qExpireIdempotency: `DELETE FROM {s}.idempotency WHERE ctid = ANY (ARRAY(
			SELECT ctid FROM {s}.idempotency WHERE created_at < $1 ORDER BY created_at LIMIT 16 FOR UPDATE SKIP LOCKED))`,

		qRollbackTarget: `SELECT previous_version_number FROM {s}.deployments
WHERE prompt_id = $1 AND environment = $2 ORDER BY id DESC LIMIT 1`,

		// Newest first, from below $2. At least one row when the prompt exists
		// (NULL columns when the page is empty).
		qListDeployments: `SELECT ` + deploymentCols + `
FROM {s}.prompts p
LEFT JOIN LATERAL (
	SELECT d.* FROM {s}.deployments d
	WHERE d.prompt_id = p.id AND d.id < $2 ORDER BY d.id DESC LIMIT $3
) d ON true
LEFT JOIN {s}.versions v ON v.prompt_id = d.prompt_id AND v.version_number = d.version_number
LEFT JOIN {s}.versions pv ON pv.prompt_id = d.prompt_id AND pv.version_number = d.previous_version_number
WHERE p.id = $1
ORDER BY d.id DESC`,

		// qListDeployments of one environment, $4.
		qListDeploymentsByEnvironment: `SELECT ` + deploymentCols + `
FROM {s}.prompts p
LEFT JOIN LATERAL (
	SELECT d.* FROM {s}.deployments d
	WHERE d.prompt_id = p.id AND d.environment = $4 AND d.id < $2 ORDER BY d.id DESC LIMIT $3
) d ON true
LEFT JOIN {s}.versions v ON v.prompt_id = d.prompt_id AND v.version_number = d.version_number
LEFT JOIN {s}.versions pv ON pv.prompt_id = d.prompt_id AND pv.version_number = d.previous_version_number
WHERE p.id = $1
ORDER BY d.id DESC`,
	}
}
