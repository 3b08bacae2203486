-- 0014: traffic splits (prompts.Split). An environment of a prompt may
-- hold a split of 2 to 10 of the prompt's versions instead of one.
--
-- environments.split holds it: its entries in order, as a JSON array of
-- {"version_id", "version_number", "weight"}; NULL when the environment
-- points at one version. version_number stays its first entry's, so that
-- every statement that finds what is active by the primary key (the
-- partials guard, the removal of an environment) finds a split active,
-- and the foreign key still holds the first entry to a version of the
-- prompt (versions never go away, so the ids and numbers of the others
-- stay true too). The read of an environment reads one more column of the
-- row it read before: its plan does not change, and the versions of a
-- split's other entries are read only for an environment that holds one.
--
-- A deployment record keeps the split the environment holds after the
-- change (split) and the one it held before (previous_split), in the same
-- form, NULL for none; version_number and previous_version_number are
-- then their first entries'. A record whose action is split is a change
-- to a split.
--
-- New columns without a default: no table is rewritten.

ALTER TABLE environments ADD COLUMN split jsonb
    CONSTRAINT environments_split_check
    CHECK (split IS NULL OR (jsonb_typeof(split) = 'array' AND (split -> 0 ->> 'version_number')::integer = version_number));

ALTER TABLE deployments ADD COLUMN split jsonb, ADD COLUMN previous_split jsonb;

-- 0003's check named the three actions there were.
ALTER TABLE deployments DROP CONSTRAINT deployments_action_check;
ALTER TABLE deployments ADD CONSTRAINT deployments_action_check
    CHECK (action IN ('activate', 'deactivate', 'rollback', 'split'));

