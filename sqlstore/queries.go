package sqlstore

// The statements of the Store, prepared on first use. {s} stands for the
// quoted schema. A statement is parsed once per connection, then only
// bound and run. Each list shape has its own statement, with conditions an
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
	qLockPartials
	qMissingPartials
	qListDeployments
	qListDeploymentsByEnvironment
	qClaimIdempotency
	qGetIdempotency
	qSaveIdempotency
	qExpireIdempotency
	qAppendEvents
	qListEvents
	qListEventsByProjects
	qLastEventID
	qCreateWebhook
	qGetWebhook
	qListWebhooks
	qDeleteWebhook
	qListDeliveryAttempts
	qClaimDeliveries
	qFinishDelivery
	qListEnvironments
	qPutEnvironment
	qSetEnvironment
	qEnvironmentOfPrompt
	qEnvironmentOfProject
	qLockEnvironment
	qEnvironmentInUse
	qDeleteEnvironment
	qSplitVersions
	qResolveVersions
	qEnvironmentState
	qHoldEnvironment
	numQueries
)

const (
	projectCols = `id, name, slug, description, is_private, created_at`
	promptCols  = `p.id, p.project_id, p.key, p.name, p.description, p.latest_version_id, p.created_at, p.revision`
	versionCols = `v.id, v.version_number, v.content, v.change_summary, v.metadata, v.created_at, v.variables, v.template_format, v.partials`
	// versionColsW are versionCols of the versions table aliased w, in
	// subqueries whose result is v.
	versionColsW = `w.id, w.version_number, w.content, w.change_summary, w.metadata, w.created_at, w.variables, w.template_format, w.partials`
	// deploymentCols are a record's columns, with the ids of its versions.
	deploymentCols = `d.id, d.environment, d.action, v.id, d.version_number, pv.id, d.previous_version_number, d.split, d.previous_split, d.actor, d.reason, d.created_at`
	// nextRevision is prompts.NextRevision of the row's revision at the
	// time $8.
	nextRevision = `GREATEST(p.revision + 1, $8::bigint)`
	// promptChanged is whether qUpdatePrompt changes a value of the row
	// old.
	promptChanged = `(($2::boolean AND old.key IS DISTINCT FROM $3::text)
		OR ($4::boolean AND old.name IS DISTINCT FROM $5::text)
		OR ($6::boolean AND old.description IS DISTINCT FROM $7::text))`

	// eventCols are an event's columns (events e) and those of what it
	// names, from eventJoins: the project (j), the version (v), the
	// deployment record (d) with its versions (dv, dp).
	eventCols = `e.id, e.type, e.project_id, e.prompt_id, e.created_at, e.data,
	j.id, j.name, j.slug, j.description, j.is_private, j.created_at,
	` + versionCols + `,
	d.id, d.environment, d.action, dv.id, d.version_number, dp.id, d.previous_version_number, d.split, d.previous_split, d.actor, d.reason, d.created_at`
	// Each lookup is a LATERAL subquery that the planner may not flatten
	// (OFFSET 0): one index probe per event, where a join estimated on a
	// page of unknown size (LIMIT $n in a generic plan) would read whole
	// tables.
	eventJoins = `
LEFT JOIN LATERAL (
	SELECT * FROM {s}.projects pj WHERE e.type = 'project.created' AND pj.id = e.project_id OFFSET 0
) j ON true
LEFT JOIN LATERAL (
	SELECT * FROM {s}.versions pv
	WHERE e.type = 'version.created' AND pv.prompt_id = e.prompt_id AND pv.version_number = e.version_number OFFSET 0
) v ON true
LEFT JOIN LATERAL (
	SELECT * FROM {s}.deployments pd
	WHERE e.type = 'deployment.created' AND pd.prompt_id = e.prompt_id AND pd.id = e.deployment_id OFFSET 0
) d ON true
LEFT JOIN {s}.versions dv ON dv.prompt_id = d.prompt_id AND dv.version_number = d.version_number
LEFT JOIN {s}.versions dp ON dp.prompt_id = d.prompt_id AND dp.version_number = d.previous_version_number`

	webhookCols = `w.id, w.url, w.events, w.project_ids, w.secret, w.created_at`
	// noEvent is the columns of new_events (see appendEvents) after the
	// first four, for an event that holds no data and names no version
	// or record.
	noEvent = `NULL::json AS data, NULL::integer AS version_number, NULL::text AS deployment_id`
)

// appendEvents ends the WITH list of a statement that appends the rows of
// its CTE new_events (ord, type, project_id, prompt_id, data,
// version_number, deployment_id, created_at; ord 1, 2, … in the log's
// order) to the event log, and queues a delivery of each to the webhooks
// it matches. When there are rows, it takes the Store's advisory lock of
// the log ({eventlock}) until the commit, so the statement must be the
// last of its transaction, and under it the ids, from the sequence
// event_ids, in ord order: the sort comes before the projection that calls
// nextval, which comes after the join that took the lock. Under the lock
// too, it removes the oldest events when the oldest was created before
// the time cutoff (a parameter): up to 16, the prefix of the log that old.
// Each event notifies "<prompt id> <project id>" on the Store's channel.
//
// ev_old reads the statement's snapshot, which may be older than the
// lock: rows another writer removed meanwhile are skipped by the DELETE.
// The events this statement appends are not in that snapshot: the newest
// events are never removed.
func appendEvents(cutoff string) string {
	return `, ev_lock AS (
	SELECT pg_advisory_xact_lock({eventlock})::text AS locked FROM (SELECT FROM new_events LIMIT 1) x
), ev_old AS (
	SELECT array_agg(w.id) AS ids FROM (
		SELECT f.id, bool_and(f.created_at < ` + cutoff + `::timestamptz) OVER (ORDER BY f.id) AS gone
		FROM (SELECT id, created_at FROM {s}.events ORDER BY id LIMIT 16) f
		WHERE (SELECT created_at FROM {s}.events ORDER BY id LIMIT 1) < ` + cutoff + `::timestamptz
	) w WHERE w.gone
), ev AS (
	INSERT INTO {s}.events (id, type, project_id, prompt_id, created_at, data, version_number, deployment_id)
	SELECT nextval('{s}.event_ids'::regclass), n.type, n.project_id, n.prompt_id, n.created_at, n.data, n.version_number, n.deployment_id
	FROM new_events n, ev_lock
	WHERE pg_notify({channel}, COALESCE(n.prompt_id, '') || ' ' || n.project_id) IS NOT NULL
	ORDER BY n.ord
	RETURNING id, type, project_id, created_at
), ev_queued AS (
	INSERT INTO {s}.deliveries (webhook_id, event_id, queued_at, next_at)
	SELECT r.webhook_id, ev.id, ev.created_at, ev.created_at
	FROM ev CROSS JOIN LATERAL (
		SELECT webhook_id FROM {s}.webhook_routes x
		WHERE x.event_type = ev.type AND x.project_id = ANY (ARRAY[ev.project_id, '']) OFFSET 0
	) r
	ORDER BY ev.id, r.webhook_id
), ev_gone AS (
	DELETE FROM {s}.events WHERE id = ANY ((SELECT ids FROM ev_old)::bigint[]) AND EXISTS (SELECT FROM ev_lock)
)`
}

// envRows is the column, in a statement that locks the prompt p, of the
// rows of the project's environments whose names match names (cmp: "=" for
// one name, "= ANY" for an array): each name, with ":protected" after it
// for a protected one. It reads them FOR SHARE, after the prompt's lock: a
// removal of one of them (qLockEnvironment's FOR UPDATE) waits for the
// change, and a change waits for a removal, which then leaves no row.
// production and staging have no row until first protected.
func envRows(names, cmp string) string {
	return `ARRAY(SELECT e.name || CASE WHEN e.protected THEN ':protected' ELSE '' END
		FROM {s}.project_environments e WHERE e.project_id = p.project_id AND e.name ` + cmp + ` (` + names + `) FOR SHARE OF e)`
}

// splitNumbers is the expression of the numbers of the versions an
// environment's row, or a deployment record, names: those of the entries
// of the split in the column split (migration 0014), in order, or when it
// is NULL the one in the column number.
func splitNumbers(split, number string) string {
	return `CASE WHEN ` + split + ` IS NULL THEN ARRAY[` + number + `]
		ELSE ARRAY(SELECT (x.entry ->> 'version_number')::integer FROM jsonb_array_elements(` + split + `) AS x(entry)) END`
}

// queryText returns the statements' text, {s} standing for the schema.
func queryText() [numQueries]string {
	return [numQueries]string{
		// The project and its event, project.created; $7 is the
		// retention's cutoff.
		qCreateProject: `WITH j AS (
	INSERT INTO {s}.projects (` + projectCols + `) VALUES ($1, $2, $3, $4, $5, $6)
	RETURNING id, created_at
), new_events AS (
	SELECT 1 AS ord, 'project.created'::text AS type, j.id AS project_id, NULL::text AS prompt_id, ` + noEvent + `, j.created_at FROM j
)` + appendEvents("$7") + `
SELECT count(*) FROM j`,

		qGetProject: `SELECT ` + projectCols + ` FROM {s}.projects WHERE id = $1`,

		qListProjects: `SELECT ` + projectCols + ` FROM {s}.projects
WHERE id > $1 ORDER BY id LIMIT $2`,

		qListProjectsByIDs: `SELECT ` + projectCols + ` FROM {s}.projects
WHERE id = ANY($1::text[]) AND id > $2 ORDER BY id LIMIT $3`,

		// Inserts nothing when the project does not exist. Appends the
		// event prompt.created, the prompt's JSON $9, when $8 (else the
		// transaction does; see tx.emit); $10 is the retention's cutoff.
		// Answers the number of prompts inserted.
		qCreatePrompt: `WITH p AS (
	INSERT INTO {s}.prompts (id, project_id, key, name, description, created_at, revision)
	SELECT $1::text, j.id, $3::text, $4::text, $5::text, $6::timestamptz, $7::bigint
	FROM {s}.projects j WHERE j.id = $2
	RETURNING id, project_id, created_at
), new_events AS (
	SELECT 1 AS ord, 'prompt.created'::text AS type, p.project_id, p.id AS prompt_id, $9::json AS data,
		NULL::integer AS version_number, NULL::text AS deployment_id, p.created_at
	FROM p WHERE $8::boolean
)` + appendEvents("$10") + `
SELECT count(*) FROM p`,

		qGetPrompt: `SELECT ` + promptCols + ` FROM {s}.prompts p WHERE p.id = $1`,

		// $2, $4, $6: whether to set key, name, description. The revision
		// moves on (to at least $8, the time) only when a value changes,
		// and only then is the event prompt.updated appended, at $9, with
		// the prompt as the update leaves it; $10 is the retention's
		// cutoff. old locks the row first and reads it as the writer
		// before (if one held the lock) left it.
		qUpdatePrompt: `WITH old AS (
	SELECT key, name, description FROM {s}.prompts WHERE id = $1 FOR UPDATE
), u AS (
	UPDATE {s}.prompts p SET
		key = CASE WHEN $2::boolean THEN $3::text ELSE old.key END,
		name = CASE WHEN $4::boolean THEN $5::text ELSE old.name END,
		description = CASE WHEN $6::boolean THEN $7::text ELSE old.description END,
		revision = CASE WHEN ` + promptChanged + ` THEN ` + nextRevision + ` ELSE p.revision END
	FROM old
	WHERE p.id = $1 AND pg_notify({channel}, p.id || ' ' || p.project_id) IS NOT NULL
	RETURNING ` + promptCols + `, ` + promptChanged + ` AS changed
), new_events AS (
	SELECT 1 AS ord, 'prompt.updated'::text AS type, u.project_id, u.id AS prompt_id,
		json_build_object('id', u.id, 'project_id', u.project_id, 'key', u.key, 'name', u.name, 'description', u.description,
			'latest_version_id', COALESCE(u.latest_version_id, ''), 'created_at', u.created_at, 'revision', u.revision) AS data,
		NULL::integer AS version_number, NULL::text AS deployment_id, $9::timestamptz AS created_at
	FROM u WHERE u.changed
)` + appendEvents("$10") + `
SELECT id, project_id, key, name, description, latest_version_id, created_at, revision FROM u`,

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
		// the new id: then CreateVersion retries under a lock. When $9, it
		// appends the event version.created ($10 is the retention's
		// cutoff); else the transaction does (see tx.emit). $11 is the
		// version's template format; when $12 is not NULL, nothing happens
		// unless the latest version's format is $12 (the format a version
		// that names none takes: then CreateVersion retries under a lock,
		// where it reads the latest format). $13 is the version's typed
		// inputs, $14 its partials. Answers the number and the prompt's project.
		qCreateVersion: `WITH p AS (
	UPDATE {s}.prompts
	SET version_count = version_count + 1, latest_version_id = $2, revision = GREATEST(revision + 1, $7::bigint)
	WHERE id = $1 AND (latest_version_id IS NULL OR latest_version_id < $2)
		AND ($12::text IS NULL OR COALESCE((SELECT l.template_format FROM {s}.versions l WHERE l.prompt_id = $1 AND l.id = latest_version_id), 'plain') = $12)
		AND pg_notify({channel}, id || ' ' || project_id) IS NOT NULL
	RETURNING id, project_id, version_count
), v AS (
	INSERT INTO {s}.versions (prompt_id, version_number, id, content, change_summary, metadata, created_at, variables, template_format, inputs, partials)
	SELECT p.id, p.version_count, $2::text, $3::text, $4::text, $5::json, $6::timestamptz, $8::text[], $11::text, $13::text[], $14::text[] FROM p
	RETURNING version_number
), new_events AS (
	SELECT 1 AS ord, 'version.created'::text AS type, p.project_id, p.id AS prompt_id, NULL::json AS data,
		v.version_number, NULL::text AS deployment_id, $6::timestamptz AS created_at
	FROM p, v WHERE $9::boolean
)` + appendEvents("$10") + `
SELECT v.version_number, p.project_id FROM p, v`,

		// In a transaction, before qCreateVersion: lock the prompt, read its
		// latest version and deployment ids and its project, and find the
		// version with id $2 if an earlier attempt of this very call stored
		// it, and the template formats of the latest version and of that one;
		// and the rows of the project's environments named in $3 (see
		// envRows), FOR SHARE.
		qLockPrompt: `SELECT p.latest_version_id, p.latest_deployment_id, v.version_number, p.project_id, l.template_format, v.template_format,
	` + envRows("$3::text[]", "= ANY") + `
FROM {s}.prompts p
LEFT JOIN {s}.versions v ON v.prompt_id = p.id AND v.id = $2
LEFT JOIN {s}.versions l ON l.prompt_id = p.id AND l.id = p.latest_version_id
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
		// row by three primary-key lookups; and the split the environment
		// holds (NULL: none), whose version is its first entry's.
		qGetActive: `SELECT ` + promptCols + `, ` + versionCols + `, d.split
FROM {s}.prompts p
LEFT JOIN {s}.environments d ON d.prompt_id = p.id AND d.environment = $2
LEFT JOIN {s}.versions v ON v.prompt_id = d.prompt_id AND v.version_number = d.version_number
WHERE p.id = $1`,

		// No row: the project is unknown; a row of NULLs: the key is.
		qGetActiveByKey: `SELECT ` + promptCols + `, ` + versionCols + `, d.split
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
		// caller's precondition), its latest deployment id (to make the
		// next), its project (for the events) and key, and the row of the
		// project's environment $2 (envRows), FOR SHARE; and, for the
		// partials guard (when $6), lock the rows of the prompts of the
		// project that the versions the change points at include, all in
		// the order of
		// their ids (so that two changes whose versions include each
		// other's prompts never wait for each other), and answer those
		// versions' partials (sorted, each once, the same on every row) and
		// whether one was found. One row each; no row for the prompt: it is unknown. The statements after it read the environments afresh: under
		// READ COMMITTED each statement sees what was committed when it
		// began, so a writer that waited here sees the change of the writer
		// it waited for.
		qLockEnvironments: `WITH target AS (
	-- The versions the change points at: $3 'version', the one numbered
	-- $4 or with id $5; $3 'split', those numbered $7 or with the ids $8;
	-- $3 'rollback', the one or the split environment $2 pointed at
	-- before its latest change; $3 'none', none.
	SELECT v.partials FROM {s}.versions v
	WHERE $3::text = 'version' AND v.prompt_id = $1 AND (v.version_number = $4::integer OR v.id = $5::text)
	UNION ALL
	SELECT v.partials FROM {s}.versions v
	WHERE $3::text = 'split' AND v.prompt_id = $1 AND (v.version_number = ANY($7::integer[]) OR v.id = ANY($8::text[]))
	UNION ALL
	SELECT v.partials FROM (
		SELECT d.previous_version_number, d.previous_split FROM {s}.deployments d
		WHERE $3::text = 'rollback' AND d.prompt_id = $1 AND d.environment = $2 ORDER BY d.id DESC LIMIT 1
	) d
	JOIN {s}.versions v ON v.prompt_id = $1 AND v.version_number = ANY(` + splitNumbers("d.previous_split", "d.previous_version_number") + `)
), keys AS (
	SELECT COALESCE(array_agg(DISTINCT k.key ORDER BY k.key), '{}') AS partials FROM target t CROSS JOIN unnest(t.partials) AS k(key)
)
SELECT p.id, p.revision, p.latest_deployment_id, p.project_id, p.key,
	EXISTS (SELECT 1 FROM target), (SELECT partials FROM keys),
	` + envRows("$2::text", "=") + `
FROM {s}.prompts p
WHERE (p.id = $1 AND pg_notify({channel}, p.id || ' ' || p.project_id) IS NOT NULL)
	OR ($6::boolean AND p.project_id = (SELECT q.project_id FROM {s}.prompts q WHERE q.id = $1)
		AND p.key = ANY((SELECT partials FROM keys)::text[]))
ORDER BY p.id
FOR UPDATE OF p`,

		// Under that lock: point environment $2 at the version numbered $3
		// or with id $4, unless it points there already, or $12 (the change's
		// precondition holds) is false, or the promotion guard refuses (the
		// version active now has other variables and $13, allow, is false),
		// or it holds a split (then the change is qHoldEnvironment's);
		// then record the change (id $7, action $8, actor $9, reason $10, at
		// $6) and, unless $11 is false, move the revision on to at least $5.
		// Answers whether the version exists, whether anything changed,
		// whether the guard refused, the variables of the version asked
		// for and of the active one, for the guard's error, and whether
		// the environment holds a split.
		qPointEnvironment: `WITH t AS (
	SELECT v.version_number, v.variables, v.inputs FROM {s}.versions v
	WHERE v.prompt_id = $1 AND (v.version_number = $3::integer OR v.id = $4::text)
), cur AS (
	SELECT e.version_number, e.split IS NOT NULL AS split, c.variables, c.inputs FROM {s}.environments e
	JOIN {s}.versions c ON c.prompt_id = e.prompt_id AND c.version_number = e.version_number
	WHERE e.prompt_id = $1 AND e.environment = $2
), point AS (
	INSERT INTO {s}.environments AS e (prompt_id, environment, version_number, updated_at)
	SELECT $1, $2, t.version_number, $6::timestamptz FROM t
	WHERE $12::boolean AND NOT EXISTS (SELECT 1 FROM cur WHERE cur.split)
		AND ($13::boolean OR NOT EXISTS (SELECT 1 FROM cur)
		OR (t.variables, t.inputs) = (SELECT variables, inputs FROM cur))
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
	EXISTS (SELECT 1 FROM t, cur WHERE $12::boolean AND NOT $13::boolean AND NOT cur.split AND (t.variables, t.inputs) <> (cur.variables, cur.inputs)),
	(SELECT variables FROM t), (SELECT variables FROM cur), (SELECT inputs FROM t), (SELECT inputs FROM cur),
	EXISTS (SELECT 1 FROM cur WHERE cur.split)`,

		// Under that lock: point environment $2 at no version, unless a
		// version active there (one an environment's row points at, or an
		// entry of the split it holds) includes the prompt (answered,
		// sorted) and $8 (force) is false; when it pointed at one, or held
		// a split, record the change (id $4, actor $5, reason $6, at $7),
		// with the split it held, and move the revision on to at least $3.
		qClearEnvironment: `WITH inc AS (
	-- Unless $8 (force): the keys of the other prompts of the project
	-- whose version active in $2 includes the prompt as a partial, while
	-- something of it is active there. The versions that include its key
	-- come from the index on partials.
	-- (OFFSET 0 keeps the lookups in this order: the index on partials,
	-- then each version's environment and prompt by primary key.)
	SELECT p.key FROM {s}.prompts me
	JOIN {s}.environments mine ON mine.prompt_id = me.id AND mine.environment = $2
	CROSS JOIN LATERAL (
		SELECT w.prompt_id, w.version_number FROM {s}.versions w WHERE w.partials @> ARRAY[me.key] OFFSET 0
	) v
	CROSS JOIN LATERAL (
		SELECT 1 FROM {s}.environments e
		WHERE e.prompt_id = v.prompt_id AND e.environment = $2
			AND (e.version_number = v.version_number OR e.split @> jsonb_build_array(jsonb_build_object('version_number', v.version_number)))
		OFFSET 0
	) e
	CROSS JOIN LATERAL (
		SELECT q.key FROM {s}.prompts q WHERE q.id = v.prompt_id AND q.project_id = me.project_id AND q.id <> me.id OFFSET 0
	) p
	WHERE me.id = $1 AND NOT $8::boolean
), clear AS (
	DELETE FROM {s}.environments WHERE prompt_id = $1 AND environment = $2 AND NOT EXISTS (SELECT 1 FROM inc)
	RETURNING version_number, split
), rec AS (
	INSERT INTO {s}.deployments (prompt_id, id, environment, action, version_number, previous_version_number, previous_split, actor, reason, created_at)
	SELECT $1, $4::text, $2, 'deactivate', NULL, clear.version_number, clear.split, $5::text, $6::text, $7::timestamptz
	FROM clear
), p AS (
	UPDATE {s}.prompts SET revision = GREATEST(revision + 1, $3::bigint), latest_deployment_id = $4::text
	WHERE id = $1 AND EXISTS (SELECT 1 FROM clear)
)
SELECT EXISTS (SELECT 1 FROM clear), ARRAY(SELECT key FROM inc ORDER BY key)`,

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

		// Under that lock: the version environment $2 pointed at before its
		// latest change, with its partials, and the split it held then
		// (NULL: none; the version is then its first entry's). No row when
		// it has no record.
		qRollbackTarget: `SELECT d.previous_version_number, v.partials, d.previous_split FROM {s}.deployments d
LEFT JOIN {s}.versions v ON v.prompt_id = d.prompt_id AND v.version_number = d.previous_version_number
WHERE d.prompt_id = $1 AND d.environment = $2 ORDER BY d.id DESC LIMIT 1`,

		// The partials guard's locks: the rows of prompt $1 and of the
		// prompts of its project with the keys $2, in the order of their
		// ids, the one order every transaction that takes more than one
		// prompt's lock follows (so two never wait for each other). A
		// deactivation of one of them takes its row's lock too: the two
		// take turns.
		qLockPartials: `SELECT id FROM {s}.prompts
WHERE id = $1 OR (project_id = (SELECT q.project_id FROM {s}.prompts q WHERE q.id = $1) AND key = ANY($2::text[]))
ORDER BY id FOR UPDATE`,

		// Under those locks: the keys of $3 that name no prompt of project
		// $1 with a version active in environment $2, sorted.
		qMissingPartials: `SELECT k.key FROM unnest($3::text[]) AS k(key)
WHERE NOT EXISTS (
	SELECT 1 FROM {s}.prompts p JOIN {s}.environments e ON e.prompt_id = p.id AND e.environment = $2
	WHERE p.project_id = $1 AND p.key = k.key
)
ORDER BY k.key COLLATE "C"`,

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

		// The events a transaction made, in order, at its end: arrays of
		// their types, projects, prompts ('' for none), data ('' for
		// none), version numbers (0 for none), deployment ids ('' for
		// none) and times; $8 is the retention's cutoff.
		qAppendEvents: `WITH new_events AS (
	SELECT n.ord, n.type, n.project_id, NULLIF(n.prompt_id, '') AS prompt_id, NULLIF(n.data, '')::json AS data,
		NULLIF(n.version_number, 0) AS version_number, NULLIF(n.deployment_id, '') AS deployment_id, n.created_at
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::timestamptz[])
		WITH ORDINALITY AS n(type, project_id, prompt_id, data, version_number, deployment_id, created_at, ord)
)` + appendEvents("$8") + `
SELECT count(*) FROM ev`,

		// The oldest id kept, and the events after $1, at most $2, in its
		// row (whose event columns are NULL when there is none): one
		// snapshot for both.
		qListEvents: `SELECT o.id, ` + eventCols + `
FROM (SELECT min(id) AS id FROM {s}.events) o
LEFT JOIN LATERAL (
	SELECT x.* FROM {s}.events x WHERE x.id > $1 ORDER BY x.id LIMIT $2
) e ON true` + eventJoins + `
ORDER BY e.id`,

		// qListEvents of the projects $3: one range of the index
		// (project_id, id) per project, each at most a page long, merged.
		// The range is written so that only that index serves it in
		// order: with project_id = p.id and ORDER BY id, a generic plan
		// that takes the project for a common one may read the primary
		// key instead, through every other project's events.
		qListEventsByProjects: `SELECT o.id, ` + eventCols + `
FROM (SELECT min(id) AS id FROM {s}.events) o
LEFT JOIN LATERAL (
	SELECT x.* FROM unnest($3::text[]) AS p(id)
	CROSS JOIN LATERAL (
		SELECT y.* FROM {s}.events y
		WHERE (y.project_id, y.id) > (p.id, $1::bigint) AND y.project_id <= p.id
		ORDER BY y.project_id, y.id LIMIT $2
	) x
	ORDER BY x.id LIMIT $2
) e ON true` + eventJoins + `
ORDER BY e.id`,

		// The retention never removes the newest event.
		qLastEventID: `SELECT COALESCE(max(id), 0) FROM {s}.events`,

		// The webhook and what it subscribes to ($7: the event types, all
		// of them when $3 is empty), unless a project of $4 is unknown.
		// Answers the number of webhooks inserted.
		qCreateWebhook: `WITH w AS (
	INSERT INTO {s}.webhooks (id, url, events, project_ids, secret, created_at)
	SELECT $1, $2, $3, $4, $5, $6
	WHERE NOT EXISTS (
		SELECT 1 FROM unnest($4::text[]) AS p(id)
		WHERE NOT EXISTS (SELECT 1 FROM {s}.projects j WHERE j.id = p.id OFFSET 0) -- a probe per id
	)
	RETURNING id, project_ids
), r AS (
	INSERT INTO {s}.webhook_routes (event_type, project_id, webhook_id)
	SELECT t.type, p.id, w.id FROM w, unnest($7::text[]) AS t(type), unnest(COALESCE(w.project_ids, ARRAY['']::text[])) AS p(id)
	ON CONFLICT DO NOTHING
)
SELECT count(*) FROM w`,

		qGetWebhook: `SELECT ` + webhookCols + ` FROM {s}.webhooks w WHERE w.id = $1`,

		qListWebhooks: `SELECT ` + webhookCols + ` FROM {s}.webhooks w WHERE w.id > $1 ORDER BY w.id LIMIT $2`,

		// The webhook, its routes (ON DELETE CASCADE), its deliveries and
		// its attempts. Answers the number of webhooks deleted.
		qDeleteWebhook: `WITH w AS (
	DELETE FROM {s}.webhooks WHERE id = $1 RETURNING id
), d AS (
	DELETE FROM {s}.deliveries WHERE webhook_id = (SELECT id FROM w)
), a AS (
	DELETE FROM {s}.delivery_attempts WHERE webhook_id = (SELECT id FROM w)
)
SELECT count(*) FROM w`,

		// Newest first, from below $2. At least one row when the webhook
		// exists (NULL columns when the page is empty).
		qListDeliveryAttempts: `SELECT a.id, a.event_id, a.attempt, a.at, a.status_code, a.error, a.duration
FROM {s}.webhooks w
LEFT JOIN LATERAL (
	SELECT x.* FROM {s}.delivery_attempts x
	WHERE x.webhook_id = w.id AND x.id < $2 ORDER BY x.id DESC LIMIT $3
) a ON true
WHERE w.id = $1
ORDER BY a.id DESC`,

		// Lease up to $2 deliveries due at $1 (queued at $4 or later: the
		// others are past the retention; of a webhook not deleted) until
		// $3, the webhooks in turn: a webhook's n-th due delivery (the
		// longest due first) takes the turn n plus the deliveries it has
		// leased already, and the lowest turns go first, those due the
		// longest among equals. Rows another claim has locked are skipped,
		// and a row it leased meanwhile is no longer due when re-read
		// under the lock.
		qClaimDeliveries: `WITH due AS (
	SELECT id, webhook_id, GREATEST(next_at, leased_until) AS due_at FROM {s}.deliveries
	WHERE GREATEST(next_at, leased_until) <= $1 AND queued_at >= $4
		AND EXISTS (SELECT 1 FROM {s}.webhooks x WHERE x.id = webhook_id OFFSET 0)
), hooks AS (
	SELECT h.webhook_id, (SELECT count(*) FROM {s}.deliveries l WHERE l.webhook_id = h.webhook_id AND l.leased_until > $1) AS leased
	FROM (SELECT DISTINCT webhook_id FROM due) h
), turns AS (
	SELECT due.id, due.due_at, hooks.leased + row_number() OVER (PARTITION BY due.webhook_id ORDER BY due.due_at, due.id) AS turn
	FROM due JOIN hooks ON hooks.webhook_id = due.webhook_id
	ORDER BY turn, due.due_at, due.id LIMIT $2
), picked AS (
	SELECT x.id, turns.turn, turns.due_at FROM {s}.deliveries x JOIN turns ON turns.id = x.id
	WHERE GREATEST(x.next_at, x.leased_until) <= $1
	FOR UPDATE OF x SKIP LOCKED
), c AS (
	UPDATE {s}.deliveries x SET leased_until = $3 WHERE x.id = ANY (ARRAY(SELECT id FROM picked))
	RETURNING x.id, x.webhook_id, x.event_id, x.attempts, x.queued_at
)
SELECT c.id, c.attempts, c.queued_at, ` + webhookCols + `, ` + eventCols + `
FROM c
JOIN picked ON picked.id = c.id
CROSS JOIN LATERAL (SELECT * FROM {s}.webhooks x WHERE x.id = c.webhook_id OFFSET 0) w
JOIN {s}.events e ON e.id = c.event_id` + eventJoins + `
ORDER BY picked.turn, picked.due_at, c.id`,

		// Record attempt $2 (at $3, status $4, error $5, duration $6 in
		// nanoseconds) of delivery $1, which is due again at $7, or ends
		// when $7 is NULL; and remove up to 16 attempts with ids below $8,
		// past the retention. Answers the number of attempts recorded: 0
		// when the delivery is unknown.
		qFinishDelivery: `WITH retry AS (
	UPDATE {s}.deliveries SET attempts = attempts + 1, next_at = $7, leased_until = NULL
	WHERE id = $1 AND $7::timestamptz IS NOT NULL
	RETURNING webhook_id, event_id, attempts
), ended AS (
	DELETE FROM {s}.deliveries WHERE id = $1 AND $7::timestamptz IS NULL
	RETURNING webhook_id, event_id, attempts + 1 AS attempts
), d AS (
	SELECT * FROM retry UNION ALL SELECT * FROM ended
), a AS (
	INSERT INTO {s}.delivery_attempts (id, webhook_id, event_id, attempt, at, status_code, error, duration)
	SELECT $2, d.webhook_id, d.event_id, d.attempts, $3, $4, $5, $6 FROM d
	RETURNING 1
), old AS (
	DELETE FROM {s}.delivery_attempts WHERE ctid = ANY (ARRAY(
		SELECT ctid FROM {s}.delivery_attempts WHERE id < $8 ORDER BY id LIMIT 16 FOR UPDATE SKIP LOCKED))
)
SELECT count(*) FROM a`,
		// A project's environments: the built-in ones first (a row of
		// theirs holds their protection), then the others oldest first. No
		// row: the project is unknown.
		qListEnvironments: `SELECT b.name, COALESCE(e.protected, false), COALESCE(e.created_at, j.created_at), b.ord
FROM {s}.projects j
CROSS JOIN (VALUES ('production'::text, 0), ('staging'::text, 1)) AS b (name, ord)
LEFT JOIN {s}.project_environments e ON e.project_id = j.id AND e.name = b.name
WHERE j.id = $1
UNION ALL
SELECT e.name, e.protected, e.created_at, 2 FROM {s}.project_environments e
WHERE e.project_id = $1 AND e.name NOT IN ('production', 'staging')
ORDER BY 4, 3, 1`,

		// In PutEnvironment's transaction, once qLockEnvironment found no
		// row: add environment $2 to project $1, protected $3, created at $4.
		// No row: another writer added it meanwhile.
		qPutEnvironment: `INSERT INTO {s}.project_environments (project_id, name, protected, created_at)
VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, name) DO NOTHING
RETURNING name, protected, created_at`,

		// Under qLockEnvironment's lock: set its protection.
		qSetEnvironment: `UPDATE {s}.project_environments SET protected = $3 WHERE project_id = $1 AND name = $2`,

		// A read of prompt $1 in environment $2: its project, and whether
		// the project has the environment. No row: the prompt is unknown.
		qEnvironmentOfPrompt: `SELECT p.project_id, EXISTS (SELECT 1 FROM {s}.project_environments e WHERE e.project_id = p.project_id AND e.name = $2)
FROM {s}.prompts p WHERE p.id = $1`,

		// A read in project $1 of environment $2: whether the project has
		// it. No row: the project is unknown.
		qEnvironmentOfProject: `SELECT EXISTS (SELECT 1 FROM {s}.project_environments e WHERE e.project_id = j.id AND e.name = $2)
FROM {s}.projects j WHERE j.id = $1`,

		// The first statement of a removal, or of a change of its
		// protection: lock the environment's row, and read it. No row: the
		// environment (or the project) is unknown, or a built-in one was
		// never protected.
		qLockEnvironment: `SELECT protected, created_at FROM {s}.project_environments WHERE project_id = $1 AND name = $2 FOR UPDATE`,

		// Under that lock: whether a prompt of project $1 has a version
		// active in environment $2, by one probe of the primary key of
		// environments per prompt of the project (a LATERAL subquery that
		// the planner may not flatten, OFFSET 0).
		qEnvironmentInUse: `SELECT EXISTS (SELECT 1 FROM {s}.prompts p
CROSS JOIN LATERAL (SELECT 1 FROM {s}.environments e WHERE e.prompt_id = p.id AND e.environment = $2 OFFSET 0) x
WHERE p.project_id = $1)`,

		// Under that lock: remove it, and tell the caches (" <project id>
		// <environment>": no prompt).
		qDeleteEnvironment: `DELETE FROM {s}.project_environments
WHERE project_id = $1 AND name = $2 AND pg_notify({channel}, ' ' || project_id || ' ' || name) IS NOT NULL`,

		// The read of an environment that holds a split, after qGetActive
		// or qGetActiveByKey: the versions of prompt $1 numbered $2, the
		// entries'. Versions never change: this reads what the split named
		// when the first statement read it.
		qSplitVersions: `SELECT ` + versionCols + ` FROM {s}.versions v WHERE v.prompt_id = $1 AND v.version_number = ANY($2::integer[])`,

		// In a change's transaction: the versions of prompt $1 numbered $2
		// or with the ids $3, with what the guards compare.
		qResolveVersions: `SELECT v.id, v.version_number, v.variables, v.inputs, v.partials FROM {s}.versions v
WHERE v.prompt_id = $1 AND (v.version_number = ANY($2::integer[]) OR v.id = ANY($3::text[]))`,

		// Under the prompt's lock: what environment $2 of prompt $1 points
		// at, one row per version active there (the one, or each entry of
		// the split it holds), with the version's signature. No row: none.
		qEnvironmentState: `SELECT e.version_number, e.split, c.version_number, c.variables, c.inputs
FROM {s}.environments e
JOIN {s}.versions c ON c.prompt_id = e.prompt_id AND c.version_number = ANY(` + splitNumbers("e.split", "e.version_number") + `)
WHERE e.prompt_id = $1 AND e.environment = $2`,

		// Under that lock, once the guards let it: point environment $2 of
		// prompt $1 at version $3, or at the split $4 (NULL: none) whose
		// first entry it is, at $5; record the change (id $6, action $7,
		// from version $8 or split $9, actor $10, reason $11) and, when
		// $12, move the revision on to at least $13.
		qHoldEnvironment: `WITH point AS (
	INSERT INTO {s}.environments AS e (prompt_id, environment, version_number, split, updated_at)
	VALUES ($1, $2, $3, $4::jsonb, $5)
	ON CONFLICT (prompt_id, environment) DO UPDATE
	SET version_number = excluded.version_number, split = excluded.split, updated_at = excluded.updated_at
	RETURNING 1
), rec AS (
	INSERT INTO {s}.deployments (prompt_id, id, environment, action, version_number, previous_version_number, split, previous_split, actor, reason, created_at)
	SELECT $1, $6::text, $2, $7::text, $3::integer, $8::integer, $4::jsonb, $9::jsonb, $10::text, $11::text, $5::timestamptz FROM point
), p AS (
	UPDATE {s}.prompts
	SET revision = CASE WHEN $12::boolean THEN GREATEST(revision + 1, $13::bigint) ELSE revision END, latest_deployment_id = $6::text
	WHERE id = $1 AND EXISTS (SELECT 1 FROM point)
)
SELECT count(*) FROM point`,
	}
}
