-- 0004: every version keeps the names of its variables (prompts.Variables),
-- computed once when it is stored. The versions stored before this
-- migration get theirs here, by the same grammar: {{name}}, spaces (U+0020)
-- allowed inside the braces, a name an ASCII letter or '_' followed by
-- letters, digits and '_'; each name once, sorted by code point. A test
-- (TestMigrateVariables) holds this expression to the Go code.

ALTER TABLE versions ADD COLUMN variables text[] COLLATE "C";

UPDATE versions v SET variables = COALESCE((
    SELECT array_agg(DISTINCT m[1] COLLATE "C" ORDER BY m[1] COLLATE "C")
    FROM regexp_matches(v.content, '\{\{ *([A-Za-z_][A-Za-z0-9_]*) *\}\}', 'g') AS m
), '{}');

ALTER TABLE versions ALTER COLUMN variables SET NOT NULL;
