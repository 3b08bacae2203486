-- 0002: what each environment points at moves to the table environments
-- (deployments will hold the history of those changes), and every prompt
-- gets a revision.

ALTER TABLE deployments RENAME TO environments;
ALTER TABLE environments RENAME CONSTRAINT deployments_pkey TO environments_pkey;
ALTER TABLE environments RENAME CONSTRAINT deployments_version_fkey TO environments_version_fkey;
ALTER TABLE environments RENAME CONSTRAINT deployments_environment_check TO environments_environment_check;

-- revision orders the states of a prompt (prompts.Prompt.Revision): every
-- write that changes the prompt, adds a version or changes what one of its
-- environments points at sets it to GREATEST(revision + 1, the write's time
-- in microseconds since 1970), under the prompt's row lock. Prompts stored
-- before this migration start at the time it runs (now(), not
-- clock_timestamp(): a default that is not volatile is stored once, without
-- rewriting the table).
ALTER TABLE prompts ADD COLUMN revision bigint NOT NULL
    DEFAULT (floor(extract(epoch FROM now()) * 1000000))::bigint
    CHECK (revision > 0);
ALTER TABLE prompts ALTER COLUMN revision DROP DEFAULT;
