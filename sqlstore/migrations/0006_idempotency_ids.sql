-- 0006: an idempotency record names the result of its write, by the ids
-- a replay reads it again by, instead of holding it: a record costs a
-- bounded size (a row of about 200 bytes), whatever the size of what it
-- replays. Its key is the SHA-256 of the scope and key
-- (prompts.Idempotency.RecordKey), its request the SHA-256 of the request
-- in hex (RequestDigest).
--
-- The records written before are converted, in this transaction: the ids
-- are taken from the result they held, so they still replay. A record
-- that names nothing (no result, which a committed record always has) is
-- dropped. The table is made anew, so that the space of the old results
-- is given back at once.

ALTER TABLE idempotency RENAME TO idempotency_0005;
ALTER TABLE idempotency_0005 RENAME CONSTRAINT idempotency_pkey TO idempotency_0005_pkey;
ALTER INDEX idempotency_created_at RENAME TO idempotency_0005_created_at;

CREATE TABLE idempotency (
    id             bytea PRIMARY KEY,
    op             text NOT NULL,
    request        text COLLATE "C" NOT NULL,
    -- What the write made or changed: NULL only inside the transaction
    -- that claimed the key, before the write.
    prompt_id      text COLLATE "C",
    version_id     text COLLATE "C",
    version_number integer,
    environment    text,
    created_at     timestamptz NOT NULL
);

CREATE INDEX idempotency_created_at ON idempotency (created_at);

INSERT INTO idempotency (id, op, request, prompt_id, version_id, version_number, environment, created_at)
SELECT * FROM (
    SELECT sha256(int4send(octet_length(scope)) || convert_to(scope, 'UTF8') || convert_to(key, 'UTF8')),
        op,
        encode(sha256(convert_to(request, 'UTF8')), 'hex'),
        CASE op WHEN 'create_version' THEN r ->> 'prompt_id' ELSE r ->> 'id' END AS prompt_id,
        CASE op WHEN 'create_version' THEN r ->> 'id' WHEN 'rollback' THEN r -> 'active_version' ->> 'id' END,
        CASE op WHEN 'create_version' THEN (r ->> 'version_number')::integer
            WHEN 'rollback' THEN (r -> 'active_version' ->> 'version_number')::integer END,
        CASE op WHEN 'rollback' THEN r ->> 'environment' END,
        created_at
    FROM idempotency_0005, LATERAL (SELECT convert_from(result, 'UTF8')::json AS r) AS j
    WHERE result IS NOT NULL
) AS converted
WHERE prompt_id IS NOT NULL;

DROP TABLE idempotency_0005;
