-- 0005: the records of the writes made with an idempotency key
-- (prompts.Idempotency), written in the same transaction as the write.
-- A record older than prompts.IdempotencyRetention is taken over by a new
-- write with its key, and removed, a few at a time, by later writes
-- (created_at's index finds them).

CREATE TABLE idempotency (
    scope      text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    op         text NOT NULL,
    request    text COLLATE "C" NOT NULL,
    result     bytea,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);

CREATE INDEX idempotency_created_at ON idempotency (created_at);
