
-- A webhook of every type receives the new types too ("those added later
-- included"): the routes of key events, which belong to no project, for
-- the webhooks of every type and every project.
INSERT INTO webhook_routes (event_type, project_id, webhook_id)
SELECT t.type, '', w.id FROM webhooks w, unnest(ARRAY['key.created', 'key.revoked']) AS t(type)
WHERE w.events = '{}' AND w.project_ids IS NULL
ON CONFLICT DO NOTHING;
